package dev.hccl.api;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Collectives of values that are not arrays of numbers, which every {@link Communicator} has, as torch's
 * {@code all_gather_object} and {@code broadcast_object_list}: metrics, file names, configurations. Bytes of any length
 * ({@link #allGatherBytes}, {@link #broadcastBytes}) and objects by Java serialization ({@link #allGatherObject},
 * {@link #broadcastObject}). For small values on the control path: each call runs two collectives (the lengths, then
 * the bytes) and copies; large data belongs in the buffer collectives.
 * <p>
 * <b>Every rank fails alike.</b> The lengths, each rank's size limit and (for a broadcast) its root are gathered first,
 * so every rank holds the same figures before any payload moves: a value over the smallest limit any rank passed,
 * ranks passing different roots, or a value that does not serialize (or a null array) fails every rank with the same
 * {@link HcclException#detail()}, naming the rank at fault as {@link HcclException#peer()}, instead of leaving the
 * others waiting. The rank whose value did not serialize has the exception as {@code getCause()}.
 * <p>
 * <b>Reading is filtered.</b> Values from peers are read through an {@link java.io.ObjectInputFilter} with the limits
 * of {@link ObjectLimits} (bytes, depth, array lengths) and the JVM-wide filter, so that a {@code jdk.serialFilter}
 * allowlist applies, plus the limits' own filter. Without a filter any class on the class path may be read: the peers
 * are ranks of the same job, authenticated by its token, but a filter that allows only the expected classes is the
 * safer habit. A value that does not deserialize on a rank fails that rank with {@link ErrorCode#E_PARA} naming the
 * rank it came from, the class where known and what to change, with the reader's exception as cause; the collectives
 * have completed by then, so no rank waits.
 * <p>
 * Arguments that are wrong on the calling rank alone (a root out of range, a null type or limits, a negative
 * {@code maxBytes}) are an {@link IllegalArgumentException} before anything is sent, as for every other call.
 */
public interface ObjectCollectives
{
    /**
     * This rank's index in the communicator.
     *
     * @return 0 to {@link #worldSize()} - 1.
     */
    int rank();

    /**
     * Number of ranks in the communicator.
     *
     * @return the world size, at least 1.
     */
    int worldSize();

    /**
     * All-gather of buffers ({@link Communicator#allGather(ByteBuffer, ByteBuffer, long, DataType)}): the lengths.
     *
     * @param send      this rank's contribution.
     * @param recv      every rank's, in rank order.
     * @param sendCount elements each rank contributes.
     * @param type      element type.
     */
    void allGather(ByteBuffer send, ByteBuffer recv, long sendCount, DataType type);

    /**
     * All-gather of blocks of different sizes ({@link Communicator#allGatherV}): the gathered bytes.
     *
     * @param send       this rank's contribution.
     * @param sendCount  its elements.
     * @param recv       every rank's block.
     * @param recvCounts elements from each rank.
     * @param recvDispls where each rank's block starts in {@code recv}, in elements.
     * @param type       element type.
     */
    void allGatherV(
        ByteBuffer send, long sendCount, ByteBuffer recv, long[] recvCounts, long[] recvDispls, DataType type);

    /**
     * Broadcast of a buffer ({@link Communicator#broadcast(ByteBuffer, long, DataType, int)}): the root's bytes.
     *
     * @param buf   the root's input, every other rank's output.
     * @param count elements.
     * @param type  element type.
     * @param root  the rank that sends.
     */
    void broadcast(ByteBuffer buf, long count, DataType type, int root);

    /**
     * Every rank's bytes, in rank order, on every rank; the lengths may differ, empty included. Each value may take
     * up to {@link ObjectLimits#DEFAULT_MAX_BYTES}.
     *
     * @param mine this rank's bytes; null fails every rank, naming this one.
     * @return {@link #worldSize()} fresh arrays: element {@code r} holds rank {@code r}'s bytes.
     * @throws HcclException on every rank alike when a rank passed null or a value over the limit, or when all the
     *                       values total more than {@link ObjectLimits#LARGEST} bytes; or when the collectives fail.
     */
    default byte[][] allGatherBytes(final byte[] mine)
    {
        return allGatherBytes(mine, ObjectLimits.DEFAULT_MAX_BYTES);
    }

    /**
     * {@link #allGatherBytes(byte[])} with another size limit.
     *
     * @param mine     this rank's bytes; null fails every rank, naming this one.
     * @param maxBytes the most bytes any rank's value may take, 0 to {@link ObjectLimits#LARGEST}; the smallest any
     *                 rank passes applies on every rank.
     * @return {@link #worldSize()} fresh arrays: element {@code r} holds rank {@code r}'s bytes.
     * @throws IllegalArgumentException when {@code maxBytes} is out of range, before anything is sent.
     * @throws HcclException            on every rank alike when a rank passed null or a value over the limit, or when
     *                                  all the values total more than {@link ObjectLimits#LARGEST} bytes; or when the
     *                                  collectives fail.
     */
    default byte[][] allGatherBytes(final byte[] mine, final int maxBytes)
    {
        return ObjectForms.allGatherBytes(this, mine, maxBytes);
    }

    /**
     * The root's bytes, on every rank. The value may take up to {@link ObjectLimits#DEFAULT_MAX_BYTES}.
     *
     * @param value the bytes at the root (null fails every rank); ignored elsewhere, may be null.
     * @param root  the rank that sends.
     * @return a fresh array of the root's bytes, on every rank (the root's included).
     * @throws IllegalArgumentException when {@code root} is out of range, before anything is sent.
     * @throws HcclException            on every rank alike when the root passed null or a value over the limit, or
     *                                  the ranks passed different roots ({@link ErrorCode#E_MISMATCH}); or when the
     *                                  collectives fail.
     */
    default byte[] broadcastBytes(final byte[] value, final int root)
    {
        return broadcastBytes(value, root, ObjectLimits.DEFAULT_MAX_BYTES);
    }

    /**
     * {@link #broadcastBytes(byte[], int)} with another size limit.
     *
     * @param value    the bytes at the root (null fails every rank); ignored elsewhere, may be null.
     * @param root     the rank that sends.
     * @param maxBytes the most bytes the root's value may take, 0 to {@link ObjectLimits#LARGEST}; the smallest any
     *                 rank passes applies on every rank.
     * @return a fresh array of the root's bytes, on every rank (the root's included).
     * @throws IllegalArgumentException when {@code root} or {@code maxBytes} is out of range, before anything is sent.
     * @throws HcclException            on every rank alike when the root passed null or a value over the limit, or
     *                                  the ranks passed different roots ({@link ErrorCode#E_MISMATCH}); or when the
     *                                  collectives fail.
     */
    default byte[] broadcastBytes(final byte[] value, final int root, final int maxBytes)
    {
        return ObjectForms.broadcastBytes(this, value, root, maxBytes);
    }

    /**
     * Every rank's value, in rank order, on every rank, as torch's {@code all_gather_object}, within
     * {@link ObjectLimits#DEFAULT}.
     *
     * @param value this rank's value: serializable at run time, null included.
     * @param type  the class every rank's value must be an instance of, as {@code Metrics.class}; for a generic type,
     *              its raw class ({@code Map.class}), whose type arguments are not checked, as by any cast.
     * @param <T>   the values' type. Not bounded by {@link java.io.Serializable}: {@code Map} and {@code List} are
     *              not, though their usual classes are.
     * @return an unmodifiable list of {@link #worldSize()} values, each deserialized from its rank's bytes (this
     *         rank's too, so every rank holds equal values).
     * @throws IllegalArgumentException when {@code type} is null or primitive, before anything is sent.
     * @throws HcclException            on every rank alike when a rank's value does not serialize or is over the limit;
     *                                  on a rank where a value does not deserialize or is not a {@code type}, naming
     *                                  the rank it came from; or when the collectives fail.
     */
    default <T> List<T> allGatherObject(final T value, final Class<T> type)
    {
        return allGatherObject(value, type, ObjectLimits.DEFAULT);
    }

    /**
     * {@link #allGatherObject(Object, Class)} within other limits.
     *
     * @param value  this rank's value: serializable at run time, null included.
     * @param type   the class every rank's value must be an instance of.
     * @param limits the size limit (the smallest any rank passes applies), depth and filter to read values through.
     * @param <T>    the values' type.
     * @return an unmodifiable list of {@link #worldSize()} values, each deserialized from its rank's bytes.
     * @throws IllegalArgumentException when {@code type} is null or primitive or {@code limits} null, before anything
     *                                  is sent.
     * @throws HcclException            on every rank alike when a rank's value does not serialize or is over the limit;
     *                                  on a rank where a value does not deserialize or is not a {@code type}, naming
     *                                  the rank it came from; or when the collectives fail.
     */
    default <T> List<T> allGatherObject(final T value, final Class<T> type, final ObjectLimits limits)
    {
        return ObjectForms.allGatherObject(this, value, type, limits);
    }

    /**
     * The root's value, on every rank, as torch's {@code broadcast_object_list} of one object, within
     * {@link ObjectLimits#DEFAULT}.
     *
     * @param value the value at the root: serializable at run time, null included; ignored elsewhere, may be null.
     * @param type  the class the root's value must be an instance of; for a generic type, its raw class.
     * @param root  the rank that sends.
     * @param <T>   the value's type.
     * @return the root's value, deserialized from its bytes on every rank (the root's included, so that every rank
     *         holds an equal value, never the root's own object).
     * @throws IllegalArgumentException when {@code type} is null or primitive, or {@code root} out of range, before
     *                                  anything is sent.
     * @throws HcclException            on every rank alike when the root's value does not serialize or is over the
     *                                  limit, or the ranks passed different roots ({@link ErrorCode#E_MISMATCH}); on a
     *                                  rank where it does not deserialize or is not a {@code type}; or when the
     *                                  collectives fail.
     */
    default <T> T broadcastObject(final T value, final Class<T> type, final int root)
    {
        return broadcastObject(value, type, root, ObjectLimits.DEFAULT);
    }

    /**
     * {@link #broadcastObject(Object, Class, int)} within other limits.
     *
     * @param value  the value at the root; ignored elsewhere, may be null.
     * @param type   the class the root's value must be an instance of.
     * @param root   the rank that sends.
     * @param limits the size limit (the smallest any rank passes applies), depth and filter to read the value through.
     * @param <T>    the value's type.
     * @return the root's value, deserialized from its bytes on every rank.
     * @throws IllegalArgumentException when {@code type} is null or primitive, {@code root} out of range or
     *                                  {@code limits} null, before anything is sent.
     * @throws HcclException            on every rank alike when the root's value does not serialize or is over the
     *                                  limit, or the ranks passed different roots ({@link ErrorCode#E_MISMATCH}); on a
     *                                  rank where it does not deserialize or is not a {@code type}; or when the
     *                                  collectives fail.
     */
    default <T> T broadcastObject(final T value, final Class<T> type, final int root, final ObjectLimits limits)
    {
        return ObjectForms.broadcastObject(this, value, type, root, limits);
    }
}
