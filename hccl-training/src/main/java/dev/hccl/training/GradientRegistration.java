package dev.hccl.training;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * What {@code GradientSync.build} and {@code buildViews} check of the model's gradients before any bucket is made: the
 * type, each buffer, each count, and then, collectively, that every rank has the same settings and gradients
 * ({@link SettingsAgreement}), so that every rank fails alike or none does.
 */
final class GradientRegistration
{
    private GradientRegistration()
    {
    }

    static GradientSync overBuffers(
        final GradientSyncBuilder settings, final List<ByteBuffer> gradients, final DataType type)
    {
        final int n = gradients == null ? 0 : gradients.size();
        String problem = n == 0 ? "no gradients; pass the model's gradient buffers, at least one" :
            typeProblem(settings, type);
        final long[] counts = new long[n];
        for (int g = 0; g < n && problem == null; g++)
        {
            problem = bufferProblem(g, gradients.get(g), type);
            counts[g] = problem == null ? gradients.get(g).remaining() / type.size() : 0;
        }
        agree(settings, type, counts, problem);
        final int[] bytes = Arrays.stream(counts).mapToInt(c -> (int)c * type.size()).toArray();
        return new GradientSync(settings, type, bytes, gradients);
    }

    /** Why a buffer of the model cannot serve as a gradient, or null, in the words of the communicator's own checks. */
    private static String bufferProblem(final int g, final ByteBuffer b, final DataType type)
    {
        if (b == null || !b.isDirect())
        {
            return "gradient " + g + " is " + (b == null ? "null" : "a heap buffer") +
                "; allocate gradients with ByteBuffer.allocateDirect, or use buildViews";
        }
        if (b.isReadOnly())
        {
            return "gradient " + g + " is read-only; await() writes the reduced values into it";
        }
        if (type.size() > 1 && b.order() != ByteOrder.nativeOrder())
        {
            return "gradient " + g + " is in " + b.order() + " byte order; elements are read in native order, so " +
                "create it with .order(ByteOrder.nativeOrder())";
        }
        if (b.remaining() % type.size() != 0)
        {
            return "gradient " + g + " holds " + b.remaining() + " bytes, not a whole number of " + type +
                " elements (" + type.size() + " bytes)";
        }
        return null;
    }

    static GradientSync overViews(final GradientSyncBuilder settings, final long[] elementCounts, final DataType type)
    {
        final long[] counts = elementCounts == null ? new long[0] : elementCounts.clone();
        String problem = counts.length == 0 ? "no gradients; pass each gradient's element count, at least one" :
            typeProblem(settings, type);
        for (int g = 0; g < counts.length && problem == null; g++)
        {
            if (counts[g] < 0 || counts[g] > Integer.MAX_VALUE / type.size())
            {
                problem = "gradient " + g + " has " + counts[g] + " elements; a gradient holds from 0 to " +
                    Integer.MAX_VALUE / type.size() + " " + type + " elements";
            }
        }
        agree(settings, type, counts, problem);
        final int[] bytes = Arrays.stream(counts).mapToInt(c -> (int)c * type.size()).toArray();
        return new GradientSync(settings, type, bytes, null);
    }

    private static String typeProblem(final GradientSyncBuilder settings, final DataType type)
    {
        if (type == null)
        {
            return "no type; pass DataType.FP32, FP16 or BF16";
        }
        if (type != DataType.FP32 && type != DataType.FP16 && type != DataType.BF16)
        {
            return "gradients of type " + type + "; GradientSync takes FP32, FP16 or BF16";
        }
        if (settings.autotune() != null && settings.compression().feedsErrorBack())
        {
            return "autotune with compression " + settings.compression() + ": autotune changes the buckets, which " +
                "would drop what its error feedback holds back; set the bucket sizes yourself, or autotune " +
                "without compression first and keep the sizes it chooses";
        }
        if (!settings.compression().accepts(type))
        {
            return "compression " + settings.compression() + " applies to FP32 gradients, these are " + type +
                "; use Compression.none()";
        }
        return null;
    }

    /** Every rank's local checks and settings, compared collectively so that every rank fails alike. */
    private static void agree(
        final GradientSyncBuilder settings, final DataType type, final long[] counts, final String problem)
    {
        // Every rank takes part in the comparison, even one that refuses its own arguments, so that none waits.
        SettingsAgreement.check(settings.comm(), problem == null ? null : "GradientSync.build on rank " +
            settings.comm().rank() + ": " + problem, type == null ? DataType.FP32 : type, settings.compression(),
            settings.average(), settings.firstBucketBytes(), settings.bucketCapBytes(),
            settings.autotune() == null ? 0 : settings.autotune().fingerprint(), counts);
    }
}
