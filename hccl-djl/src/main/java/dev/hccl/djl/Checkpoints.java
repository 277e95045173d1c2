package dev.hccl.djl;

import ai.djl.MalformedModelException;
import ai.djl.Model;
import dev.hccl.api.Communicator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checkpoints of a data-parallel job, as DDP scripts write them: rank 0 alone saves the model's parameters (every
 * rank holds the same), and a restarted job ({@code hcclrun --max-restarts}) resumes from the newest: rank 0 loads it
 * before {@link DataParallelTrainer#initialize}, which then gives it to every rank, so that only rank 0 needs the
 * directory.
 * <pre>{@code
 * Checkpoints checkpoints = new Checkpoints(comm, dir, "cnn");
 * int done = checkpoints.resume(model);            // epochs already trained: 0 on a first run
 * trainer.initialize(shape);                        // every rank gets rank 0's (restored) parameters
 * sampler.setEpoch(done);
 * for (int epoch = done; epoch < epochs; epoch++) {
 *     EasyTrain.fit(trainer, 1, train, validate);
 *     checkpoints.save(model, epoch + 1);
 * }
 * }</pre>
 * A checkpoint is DJL's parameter file, {@code NAME-EEEE.params} for {@code EEEE} epochs done, written in a private
 * temporary directory beside it and moved into place whole, so that a rank that dies while saving never leaves a
 * partial file for the next run to load. The optimizer's state (momentum, Adam's moments) is not in it: DJL gives no
 * way to save it, so that a resumed run with such an optimizer starts it anew.
 */
public final class Checkpoints
{
    private final Communicator comm;
    private final Path dir;
    private final String name;
    private final Pattern file;

    /**
     * Checkpoints named {@code name} in {@code dir}, created by rank 0 when missing.
     *
     * @param comm the data-parallel ranks.
     * @param dir  the directory, read and written by rank 0 alone.
     * @param name the model's name in the files' names.
     */
    public Checkpoints(final Communicator comm, final Path dir, final String name)
    {
        this.comm = Objects.requireNonNull(comm, "comm");
        this.dir = Objects.requireNonNull(dir, "dir");
        this.name = Objects.requireNonNull(name, "name");
        this.file = Pattern.compile(Pattern.quote(name) + "-(\\d{4,})\\.params");
    }

    /**
     * Saves the model after {@code epochsDone} epochs; collective: rank 0 writes, and every rank returns once the
     * file is in place, or throws what rank 0's write threw.
     *
     * @param model      the model, the same on every rank.
     * @param epochsDone the epochs trained so far, at least 1.
     * @throws IOException on every rank, when rank 0 could not write.
     */
    public void save(final Model model, final int epochsDone) throws IOException
    {
        if (epochsDone < 1)
        {
            throw new IllegalArgumentException("Checkpoints.save on rank " + comm.rank() + ": epochsDone is " +
                epochsDone + "; save after at least one epoch");
        }
        String failure = null;
        if (comm.rank() == 0)
        {
            try
            {
                write(model, epochsDone);
            }
            catch (final IOException | RuntimeException e)
            {
                failure = e.toString();
            }
        }
        final String outcome = comm.broadcastObject(failure, String.class, 0);
        if (outcome != null)
        {
            throw new IOException("Checkpoints.save of epoch " + epochsDone + " on rank " + comm.rank() + ": rank 0 " +
                "could not write to " + dir + ": " + outcome + "; give a directory that rank 0 can write");
        }
    }

    private void write(final Model model, final int epochsDone) throws IOException
    {
        Files.createDirectories(dir);
        final Path saving = Files.createTempDirectory(dir, ".saving-");
        try
        {
            model.setProperty("Epoch", Integer.toString(epochsDone));
            model.save(saving, name);
            final String fileName = fileName(epochsDone);
            Files.move(saving.resolve(fileName), dir.resolve(fileName), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        }
        finally
        {
            try (Stream<Path> left = Files.list(saving))
            {
                for (final Path p : (Iterable<Path>)left::iterator)
                {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(saving);
        }
    }

    /**
     * Loads the newest checkpoint into rank 0's model, if there is one; collective. Call it before the trainer's
     * {@code initialize}, which gives rank 0's parameters to every rank.
     *
     * @param model the model, with its block set, not yet initialized.
     * @return the epochs the checkpoint had done, on every rank; 0 when there is none.
     * @throws IOException on every rank, when rank 0 found a checkpoint it could not load.
     */
    public int resume(final Model model) throws IOException
    {
        int done = 0;
        String failure = null;
        if (comm.rank() == 0)
        {
            try
            {
                done = newest();
                if (done > 0)
                {
                    model.load(dir, name, Map.of("epoch", Integer.toString(done)));
                }
            }
            catch (final IOException | MalformedModelException | RuntimeException e)
            {
                failure = e.toString();
            }
        }
        final String outcome = comm.broadcastObject(failure, String.class, 0);
        if (outcome != null)
        {
            throw new IOException("Checkpoints.resume on rank " + comm.rank() + ": rank 0 could not load the newest " +
                "checkpoint in " + dir + ": " + outcome + "; remove it to start again from the one before");
        }
        return comm.broadcastObject(done, Integer.class, 0);
    }

    /**
     * The newest checkpoint in the directory, on this rank's view of it.
     *
     * @return its epochs done; 0 when there is none.
     * @throws IOException when the directory cannot be listed.
     */
    int newest() throws IOException
    {
        if (!Files.isDirectory(dir))
        {
            return 0;
        }
        int newest = 0;
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final Matcher m = file.matcher(p.getFileName().toString());
                if (m.matches())
                {
                    newest = Math.max(newest, Integer.parseInt(m.group(1)));
                }
            }
        }
        catch (final UncheckedIOException e)
        {
            throw e.getCause();
        }
        return newest;
    }

    private String fileName(final int epochsDone)
    {
        return String.format(Locale.ROOT, "%s-%04d.params", name, epochsDone);
    }
}
