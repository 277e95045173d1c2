package dev.hccl.api.spi;

/**
 * Tags distinguish the messages of one operation between one pair of ranks: a phase (8 bits), a step (24 bits) and
 * a segment (32 bits), packed in a long.
 */
public final class Tags
{
    /** Phase reserved for point-to-point {@code send}/{@code recv}. */
    public static final int P2P_PHASE = 0xFF;
    /**
     * Phase reserved for the communicator layer's control messages (flow control: request to send, clear to send,
     * credit), which never reach a receive; no algorithm may use it.
     */
    public static final int CONTROL_PHASE = 0xFE;

    private Tags()
    {
    }

    /**
     * Packs a tag.
     *
     * @param phase   0 to 255: the phase of the algorithm (reduce-scatter, all-gather, ...).
     * @param step    0 to 2^24 - 1: the step within the phase.
     * @param segment the pipelined segment within the step.
     * @return the tag.
     */
    public static long of(final int phase, final int step, final int segment)
    {
        return ((long)(phase & 0xFF) << 56) | ((long)(step & 0xFF_FFFF) << 32) | (segment & 0xFFFF_FFFFL);
    }

    /**
     * The phase of a tag.
     *
     * @param tag a tag.
     * @return its phase.
     */
    public static int phase(final long tag)
    {
        return (int)(tag >>> 56);
    }

    /**
     * Describes a tag for error messages.
     *
     * @param tag a tag.
     * @return e.g. {@code phase 1 step 3 segment 0}.
     */
    public static String describe(final long tag)
    {
        return "phase " + (tag >>> 56) + " step " + ((tag >>> 32) & 0xFF_FFFF) + " segment " + (tag & 0xFFFF_FFFFL);
    }
}
