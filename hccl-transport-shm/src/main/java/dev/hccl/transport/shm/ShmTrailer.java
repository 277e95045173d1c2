package dev.hccl.transport.shm;

import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;

/**
 * Judges a ring's trailer from its values, so that a segment another process wrote into is told from a peer that is
 * slow or frozen. The trailer holds Agrona's positions and the consumer's heartbeat:
 * <ul>
 *     <li>positions count the bytes since the ring began, in multiples of the record alignment: the consumer's head
 *     never passes the producer's tail, and the tail is never more than the capacity ahead of the head;</li>
 *     <li>the heartbeat is a wall-clock time in milliseconds that the consumer wrote (both ends read the machine's
 *     one clock): not before its process started, and not after now, each give or take
 *     {@link #CLOCK_SLACK_MILLIS}.</li>
 * </ul>
 */
final class ShmTrailer
{
    /**
     * How far a heartbeat may lie outside what its writer can have written: a process's start time is known to a
     * second or so, and the clock may be set back between a write and the read.
     */
    static final long CLOCK_SLACK_MILLIS = 60_000;

    private ShmTrailer()
    {
    }

    /**
     * What is wrong with a ring's positions: the head is read before and after the tail, since each side moves its
     * own position meanwhile.
     *
     * @param headBefore the consumer's position, read before the tail.
     * @param tail       the producer's position.
     * @param headAfter  the consumer's position, read after the tail.
     * @param capacity   the ring's capacity in bytes.
     * @return the problem, naming the field and its value, or null when the values can be the ring's.
     */
    static String positionsProblem(final long headBefore, final long tail, final long headAfter, final int capacity)
    {
        if (headBefore < 0 || 0 != headBefore % RecordDescriptor.ALIGNMENT)
        {
            return "a head position of " + headBefore + " (a count of bytes read, a multiple of " +
                RecordDescriptor.ALIGNMENT + ")";
        }
        if (tail < 0 || 0 != tail % RecordDescriptor.ALIGNMENT)
        {
            return "a tail position of " + tail + " (a count of bytes written, a multiple of " +
                RecordDescriptor.ALIGNMENT + ")";
        }
        if (headBefore > tail)
        {
            return "a head position of " + headBefore + " past the tail position " + tail + " (more read than written)";
        }
        if (tail - headAfter > capacity)
        {
            return "a tail position of " + tail + " more than the capacity of " + capacity + " bytes ahead of the " +
                "head position " + headAfter + " (more written than the ring holds)";
        }
        return null;
    }

    /**
     * What is wrong with a heartbeat.
     *
     * @param heartbeat         the value read.
     * @param nowMillis         the wall clock now.
     * @param writerStartMillis when the writer's process started, or 0 when unknown.
     * @return the problem, naming the field and its value, or null when the writer can have written it.
     */
    static String heartbeatProblem(final long heartbeat, final long nowMillis, final long writerStartMillis)
    {
        if (heartbeat <= 0)
        {
            return "a consumer heartbeat of " + heartbeat + " (a wall-clock time in milliseconds, positive)";
        }
        if (heartbeat - nowMillis > CLOCK_SLACK_MILLIS)
        {
            return "a consumer heartbeat of " + heartbeat + ", " + (heartbeat - nowMillis) + " ms in the future";
        }
        if (writerStartMillis > 0 && writerStartMillis - heartbeat > CLOCK_SLACK_MILLIS)
        {
            return "a consumer heartbeat of " + heartbeat + ", " + (writerStartMillis - heartbeat) + " ms before " +
                "its writer's process started";
        }
        return null;
    }

    /**
     * Reads and judges a ring's trailer.
     *
     * @param ring              the ring.
     * @param nowMillis         the wall clock now.
     * @param heartbeatWriter   when the process that writes the heartbeat started: 0 when unknown, negative to
     *                          leave the heartbeat unjudged (this rank's own).
     * @return the problem, or null.
     */
    static String problem(final OneToOneRingBuffer ring, final long nowMillis, final long heartbeatWriter)
    {
        final long headBefore = ring.consumerPosition();
        final long tail = ring.producerPosition();
        final long headAfter = ring.consumerPosition();
        final String positions = positionsProblem(headBefore, tail, headAfter, ring.capacity());
        if (null != positions || heartbeatWriter < 0)
        {
            return positions;
        }
        return heartbeatProblem(ring.consumerHeartbeatTime(), nowMillis, heartbeatWriter);
    }
}
