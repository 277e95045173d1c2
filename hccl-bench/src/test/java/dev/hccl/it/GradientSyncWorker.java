package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.training.Compression;
import dev.hccl.training.GradientSync;
import dev.hccl.training.GradientSyncBuilder;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;

/**
 * One rank of {@link GradientSyncProcessTest}: a model of odd gradients (zero-length ones, one larger than the bucket
 * cap, two thousand tiny ones), three steps whose gradients two threads mark ready in an order of this rank's own,
 * each result checked against the mean of every rank's values computed here. Prints {@code STEP s OK} per step and
 * {@code RESULT crc} of the last result; {@code REFUSED message} and exit status 3 when the build fails.
 * <p>
 * Arguments: the compression ({@code none}, {@code fp16}, {@code bf16}, {@code topk:F}), {@code fused} or
 * {@code views}, and optionally a rank whose compression is fp16 whatever the first argument says.
 */
public final class GradientSyncWorker
{
    private static final int STEPS = 3;

    private GradientSyncWorker()
    {
    }

    static int[] counts()
    {
        final List<Integer> counts = new ArrayList<>(List.of(300, 0, 7, 300_000, 1, 64, 0, 129));
        for (int i = 0; i < 2000; i++)
        {
            counts.add(3);
        }
        return counts.stream().mapToInt(Integer::intValue).toArray();
    }

    static float value(final int rank, final int step, final int g, final int e)
    {
        long z = ((long)rank * 1_000_003 + step) * 7919 + g * 104_729L + e;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return ((z ^ (z >>> 31)) >>> 40) / (float)(1 << 23) - 1;
    }

    public static void main(final String[] args) throws Exception
    {
        final String compressionName = args[0];
        final boolean views = "views".equals(args[1]);
        final int odd = args.length > 2 ? Integer.parseInt(args[2]) : -1;
        final int[] counts = counts();
        try (Communicator comm = Hccl.init())
        {
            final int rank = comm.rank();
            final Compression compression = rank == odd ? Compression.fp16() : parse(compressionName);
            final GradientSyncBuilder builder = GradientSync.builder(comm).firstBucketBytes(4096)
                .bucketCapBytes(256 * 1024).compression(compression);
            final GradientSync sync;
            try
            {
                sync = views ? builder.buildViews(java.util.Arrays.stream(counts).asLongStream().toArray(),
                    DataType.FP32) : builder.build(allocate(counts), DataType.FP32);
            }
            catch (final HcclException | IllegalArgumentException ex)
            {
                System.out.println("REFUSED " + ex.getMessage());
                System.exit(3);
                return;
            }
            final List<ByteBuffer> grads = sync.gradients();
            final double tolerance = tolerance(compressionName);
            for (int step = 0; step < STEPS; step++)
            {
                for (int g = 0; g < counts.length; g++)
                {
                    for (int e = 0; e < counts[g]; e++)
                    {
                        grads.get(g).putFloat(grads.get(g).position() + e * 4, value(rank, step, g, e));
                    }
                }
                markFromTwoThreads(sync, counts.length, new Random(rank * 31L + step));
                sync.await();
                if (tolerance >= 0)
                {
                    check(grads, counts, comm.worldSize(), step, tolerance);
                }
                System.out.println("STEP " + step + " OK");
            }
            final CRC32 crc = new CRC32();
            grads.forEach(b -> crc.update(b.duplicate()));
            System.out.println("RESULT " + Long.toHexString(crc.getValue()));
            sync.close();
        }
    }

    private static Compression parse(final String name)
    {
        return switch (name)
        {
            case "none" -> Compression.none();
            case "fp16" -> Compression.fp16();
            case "bf16" -> Compression.bf16();
            default -> Compression.topK(Double.parseDouble(name.substring("topk:".length())));
        };
    }

    /** How far from the exact mean a result may be; negative where the mean is not what is sent (top-k). */
    private static double tolerance(final String compression)
    {
        return switch (compression)
        {
            case "none" -> 1e-6;
            case "fp16" -> 2e-3;
            case "bf16" -> 1.6e-2;
            default -> -1;
        };
    }

    private static List<ByteBuffer> allocate(final int[] counts)
    {
        final List<ByteBuffer> grads = new ArrayList<>();
        for (final int count : counts)
        {
            grads.add(ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder()));
        }
        return grads;
    }

    /** Half the gradients from this thread, half from another, both in a shuffled order. */
    private static void markFromTwoThreads(final GradientSync sync, final int n, final Random random)
        throws InterruptedException
    {
        final List<Integer> order = new ArrayList<>();
        for (int g = 0; g < n; g++)
        {
            order.add(g);
        }
        Collections.shuffle(order, random);
        final List<Integer> other = order.subList(0, n / 2);
        final Thread helper = new Thread(() -> other.forEach(sync::markReady));
        helper.start();
        order.subList(n / 2, n).forEach(sync::markReady);
        helper.join();
    }

    private static void check(
        final List<ByteBuffer> grads, final int[] counts, final int ranks, final int step, final double tolerance)
    {
        for (int g = 0; g < counts.length; g++)
        {
            for (int e = 0; e < counts[g]; e++)
            {
                double sum = 0;
                for (int r = 0; r < ranks; r++)
                {
                    sum += value(r, step, g, e);
                }
                final float got = grads.get(g).getFloat(grads.get(g).position() + e * 4);
                if (!(Math.abs(got - sum / ranks) <= tolerance))
                {
                    throw new AssertionError("step " + step + ", gradient " + g + ", element " + e + ": " + got +
                        ", expected " + sum / ranks);
                }
            }
        }
    }
}
