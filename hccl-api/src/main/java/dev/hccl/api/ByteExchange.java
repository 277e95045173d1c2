package dev.hccl.api;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link ObjectCollectives}' byte forms on the buffer collectives, in two steps: a header, then the payload.
 * <p>
 * The header is an all-gather of three {@code INT64} per rank: the length of what the rank sends (or a failure
 * marker), the size limit it was given, and the root it was given (broadcast). Every rank thus holds the same figures
 * and takes the same decision from them: a value over the smallest limit, ranks disagreeing on the root, or a total
 * too large for one buffer fail every rank with the same message before any payload moves, and no rank is left
 * waiting for a payload that another has given up. A broadcast gathers the header too, not only the root's length,
 * so that a non-root rank's limit counts as well.
 * <p>
 * A rank that has nothing to send (its value did not serialize; a null array) sends a negative length,
 * {@code -1 - n}, and an {@code n}-byte description of the failure as its payload: every rank then fails with it,
 * naming that rank, instead of waiting for a rank that never came.
 */
final class ByteExchange
{
    /** Fields of a rank's header. */
    private static final int FIELDS = 3;
    /** The length, or {@code -1 - n} for a failure described in {@code n} bytes. */
    private static final int LENGTH = 0;
    /** The rank's {@code maxBytes}. */
    private static final int LIMIT = 1;
    /** The rank's root, or {@link #NO_ROOT}. */
    private static final int ROOT = 2;
    /** A gather's root field. */
    private static final long NO_ROOT = -1;
    /** Characters of a failure's description that are sent; the rest is cut. */
    private static final int DESCRIPTION_CHARS = 500;
    /** A broadcast's non-root ranks' contribution. */
    private static final Contribution NOTHING = Contribution.of(new byte[0]);

    private ByteExchange()
    {
    }

    /**
     * What a rank contributes: its bytes; or their length alone, over this rank's limit, which the header's check
     * refuses on every rank before any payload moves; or why it has none.
     *
     * @param bytes   the bytes, or null.
     * @param length  the bytes' length, kept or not; unused after a failure.
     * @param failure the failure in words, naming the rank, or null.
     * @param cause   the failure's exception on this rank, or null.
     */
    record Contribution(byte[] bytes, long length, String failure, Throwable cause)
    {
        static Contribution of(final byte[] bytes)
        {
            return new Contribution(bytes, bytes.length, null, null);
        }

        static Contribution oversized(final long length)
        {
            return new Contribution(null, length, null, null);
        }

        static Contribution failed(final String failure, final Throwable cause)
        {
            return new Contribution(null, 0, failure, cause);
        }

        /** What goes out as the payload: the bytes, the description cut short, or nothing when oversized. */
        byte[] payload()
        {
            if (null == failure)
            {
                return null != bytes ? bytes : new byte[0];
            }
            return (failure.length() > DESCRIPTION_CHARS ? failure.substring(0, DESCRIPTION_CHARS) + "..." :
                failure).getBytes(StandardCharsets.UTF_8);
        }

        /** The header's length field for {@code payload}: the length, or {@code -1 - n} for a failure. */
        long lengthField(final byte[] payload)
        {
            return null == failure ? length : -1L - payload.length;
        }
    }

    /**
     * Every rank's bytes, in rank order, on every rank.
     *
     * @param comm     the communicator.
     * @param call     the call, for messages.
     * @param mine     this rank's contribution.
     * @param maxBytes this rank's limit, checked.
     * @return one array per rank, fresh on every rank.
     * @throws HcclException on every rank alike, before the payload, when a value is over the smallest limit or all
     *                       are over what one buffer holds; after it when a rank had no bytes.
     */
    static byte[][] allGather(
        final ObjectCollectives comm, final String call, final Contribution mine, final int maxBytes)
    {
        final int n = comm.worldSize();
        final byte[] payload = mine.payload();
        final long[] header = headers(comm, mine.lengthField(payload), maxBytes, NO_ROOT);
        final int[] senders = new int[n];
        for (int r = 0; r < n; r++)
        {
            senders[r] = r;
        }
        checkLimit(comm, call, header, senders);
        final long[] counts = new long[n];
        final long[] displs = new long[n];
        long total = 0;
        for (int r = 0; r < n; r++)
        {
            counts[r] = blockLength(header, r);
            displs[r] = total;
            total += counts[r];
        }
        if (total > ObjectLimits.LARGEST)
        {
            throw new HcclException(ErrorCode.E_NOT_SUPPORT, comm.rank(), HcclException.UNKNOWN_RANK, null,
                HcclException.NO_SEQUENCE, call + ": the " + n + " ranks' values total " + total +
                " bytes, more than the " + ObjectLimits.LARGEST + " one gather holds: gather fewer or smaller " +
                "values, in several calls", null);
        }
        final ByteBuffer all = ByteBuffer.allocateDirect((int)total);
        if (total > 0)
        {
            final int at = (int)displs[comm.rank()];
            all.put(at, payload);
            final ByteBuffer send = all.duplicate().position(at).limit(at + payload.length);
            comm.allGatherV(send, payload.length, all, counts, displs, DataType.UINT8);
        }
        final byte[][] blocks = new byte[n][];
        for (int r = 0; r < n; r++)
        {
            blocks[r] = new byte[(int)counts[r]];
            all.get((int)displs[r], blocks[r]);
        }
        checkFailures(comm, call, header, blocks, senders, mine);
        return blocks;
    }

    /**
     * The root's bytes, on every rank.
     *
     * @param comm     the communicator.
     * @param call     the call, for messages.
     * @param mine     this rank's contribution, used at the root only (may be null elsewhere).
     * @param root     the root, in range.
     * @param maxBytes this rank's limit, checked.
     * @return the root's bytes, a fresh array on every rank (the root's included).
     * @throws HcclException on every rank alike: {@link ErrorCode#E_MISMATCH} when the ranks passed different roots,
     *                       before the payload, as when the root's value is over the smallest limit; after it when
     *                       the root had no bytes.
     */
    static byte[] broadcast(
        final ObjectCollectives comm, final String call, final Contribution mine, final int root, final int maxBytes)
    {
        final boolean sender = comm.rank() == root;
        final Contribution given = sender ? mine : NOTHING;
        final byte[] payload = given.payload();
        final long[] header = headers(comm, given.lengthField(payload), maxBytes, root);
        checkRoots(comm, call, header);
        final int[] senders = {root};
        checkLimit(comm, call, header, senders);
        final int count = (int)blockLength(header, root);
        final ByteBuffer buf = ByteBuffer.allocateDirect(count);
        if (count > 0)
        {
            if (sender)
            {
                buf.put(0, payload);
            }
            comm.broadcast(buf, count, DataType.UINT8, root);
        }
        final byte[][] blocks = new byte[comm.worldSize()][];
        blocks[root] = new byte[count];
        buf.get(0, blocks[root]);
        checkFailures(comm, call, header, blocks, senders, given);
        return blocks[root];
    }

    /** Gathers every rank's header: {@link #FIELDS} values per rank, in rank order. */
    private static long[] headers(final ObjectCollectives comm, final long length, final int maxBytes, final long root)
    {
        final ByteBuffer mine = ByteBuffer.allocateDirect(FIELDS * Long.BYTES).order(ByteOrder.nativeOrder());
        mine.putLong(LENGTH * Long.BYTES, length).putLong(LIMIT * Long.BYTES, maxBytes)
            .putLong(ROOT * Long.BYTES, root);
        final int n = comm.worldSize();
        final ByteBuffer all = ByteBuffer.allocateDirect(n * FIELDS * Long.BYTES).order(ByteOrder.nativeOrder());
        comm.allGather(mine, all, FIELDS, DataType.INT64);
        final long[] header = new long[n * FIELDS];
        all.asLongBuffer().get(header);
        return header;
    }

    /** The payload's length of rank {@code r}: its bytes' or its failure's description's. */
    private static long blockLength(final long[] header, final int r)
    {
        final long length = header[r * FIELDS + LENGTH];
        return length >= 0 ? length : -1 - length;
    }

    private static void checkRoots(final ObjectCollectives comm, final String call, final long[] header)
    {
        for (int r = 1; r < comm.worldSize(); r++)
        {
            if (header[r * FIELDS + ROOT] != header[ROOT])
            {
                throw new HcclException(ErrorCode.E_MISMATCH, comm.rank(), r, null, HcclException.NO_SEQUENCE,
                    call + ": the ranks passed different roots: rank 0 passed " + header[ROOT] + ", rank " + r +
                    " passed " + header[r * FIELDS + ROOT] + ": pass the same root on every rank", null);
            }
        }
    }

    /** Fails when a sender's bytes are over the smallest limit any rank passed. */
    private static void checkLimit(
        final ObjectCollectives comm, final String call, final long[] header, final int[] senders)
    {
        long limit = Long.MAX_VALUE;
        int limitRank = 0;
        boolean same = true;
        for (int r = 0; r < comm.worldSize(); r++)
        {
            final long rankLimit = header[r * FIELDS + LIMIT];
            same &= r == 0 || rankLimit == header[LIMIT];
            if (rankLimit < limit)
            {
                limit = rankLimit;
                limitRank = r;
            }
        }
        for (final int s : senders)
        {
            final long length = header[s * FIELDS + LENGTH];
            if (length > limit)
            {
                throw new HcclException(ErrorCode.E_PARA, comm.rank(), s, null, HcclException.NO_SEQUENCE,
                    call + ": rank " + s + "'s value is " + length + " bytes, over the limit of " + limit +
                    " bytes" + (same ? "" : " (rank " + limitRank + "'s, the smallest the ranks passed)") +
                    ": pass a larger maxBytes on every rank, or send less", null);
            }
        }
    }

    /** Fails when a sender had no bytes, with its description; the cause is this rank's own failure, if any. */
    private static void checkFailures(final ObjectCollectives comm, final String call, final long[] header,
        final byte[][] blocks, final int[] senders, final Contribution mine)
    {
        final List<Integer> failed = new ArrayList<>();
        for (final int s : senders)
        {
            if (header[s * FIELDS + LENGTH] < 0)
            {
                failed.add(s);
            }
        }
        if (failed.isEmpty())
        {
            return;
        }
        final int first = failed.get(0);
        final String others = failed.size() == 1 ? "" : "; ranks " + failed.subList(1, failed.size()) +
            " failed too";
        throw new HcclException(ErrorCode.E_PARA, comm.rank(), first, null, HcclException.NO_SEQUENCE,
            call + ": " + new String(blocks[first], StandardCharsets.UTF_8) + others, mine.cause());
    }
}
