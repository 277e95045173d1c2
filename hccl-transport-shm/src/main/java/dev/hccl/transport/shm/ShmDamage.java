package dev.hccl.transport.shm;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;

import java.nio.file.Path;

/**
 * The errors of a damaged segment, {@link ErrorCode#E_SHM_SEGMENT}, naming the peer and the segment's file (gone from
 * the directory once the pair has connected, but its name tells the job and the pair).
 */
final class ShmDamage
{
    private ShmDamage()
    {
    }

    /**
     * The error of a segment whose file was truncated under the mapping, when {@link ShmSegment#truncation()} says so.
     *
     * @param rank    this rank.
     * @param peer    the pair's other rank.
     * @param segment the segment.
     * @param doing   what this rank was doing, e.g. {@code "sending to rank 1"}.
     * @param fault   the memory fault that led to the look, or null.
     * @return the error, or null when the file is whole.
     */
    static HcclException truncated(
        final int rank, final int peer, final ShmSegment segment, final String doing, final Throwable fault)
    {
        final String truncation = segment.truncation();
        if (null == truncation)
        {
            return null;
        }
        return new HcclException(ErrorCode.E_SHM_SEGMENT, rank, peer, null, HcclException.NO_SEQUENCE,
            "the shared memory with rank " + peer + " is truncated, found while " + doing + ": its file " +
            segment.file() + " " + truncation + ", so its memory faults (SIGBUS). Another process shrank it after " +
            "it was mapped: stop whatever cleans or truncates files in " + segment.file().getParent() + " (" +
            ShmTransportProvider.DIR.variable() + ") while jobs run", fault);
    }

    /**
     * What is wrong with a node arena whose file was truncated under the mapping.
     *
     * @param file       the arena's file (gone from the directory once every member mapped it; its name tells the
     *                   job).
     * @param truncation what {@link ShmFile#truncation()} found.
     * @return the words for the user's {@link ErrorCode#E_SHM_SEGMENT}.
     */
    static String arenaTruncated(final Path file, final String truncation)
    {
        return "the node arena's shared memory is truncated: its file " + file + " " + truncation + ", so its " +
            "memory faults (SIGBUS). Another process shrank it after it was mapped: stop whatever cleans or " +
            "truncates files in " + file.getParent() + " (" + ShmTransportProvider.DIR.variable() + ") while jobs run";
    }

    /**
     * What is wrong with a node arena that holds what no member can have written.
     *
     * @param file the arena's file.
     * @param what what is wrong, naming the member.
     * @return the words for the user's {@link ErrorCode#E_SHM_SEGMENT}.
     */
    static String arenaCorrupted(final Path file, final String what)
    {
        return "the node arena's shared memory (" + file + ") is corrupted: " + what + ". Another process wrote " +
            "into it: stop whatever writes into " + file.getParent() + " (" + ShmTransportProvider.DIR.variable() +
            ") while jobs run";
    }

    /**
     * A chunk of a message does not match the CRC32C its sender wrote after it ({@code HCCL_CHECKSUM}).
     *
     * @param rank      this rank, the reader.
     * @param peer      the pair's other rank, the writer.
     * @param segment   the segment.
     * @param operation the message's operation.
     * @param seq       its sequence number.
     * @return the error.
     */
    static HcclException checksumMismatch(
        final int rank, final int peer, final ShmSegment segment, final Operation operation, final long seq)
    {
        return new HcclException(ErrorCode.E_SHM_SEGMENT, rank, peer, operation, seq,
            "the shared memory with rank " + peer + " is corrupted: a chunk of a message from rank " + peer +
            " does not match the CRC32C rank " + peer + " wrote after it in the ring of " + segment.file() + " (" +
            CommConfig.CHECKSUM.variable() + "), so the bytes changed after rank " + peer + " wrote them; the " +
            "message is dropped. Another process wrote into the segment: stop whatever writes into " +
            segment.file().getParent() + " (" + ShmTransportProvider.DIR.variable() + ") while jobs run", null);
    }

    /**
     * The segment holds a value its writer cannot have written.
     *
     * @param rank    this rank.
     * @param peer    the pair's other rank.
     * @param segment the segment.
     * @param writer  the rank whose ring it is, which writes its tail.
     * @param problem the field and its value, as {@link ShmTrailer} says.
     * @return the error.
     */
    static HcclException corrupted(
        final int rank, final int peer, final ShmSegment segment, final int writer, final String problem)
    {
        final int reader = writer == rank ? peer : rank;
        return new HcclException(ErrorCode.E_SHM_SEGMENT, rank, peer, null, HcclException.NO_SEQUENCE,
            "the shared memory with rank " + peer + " is corrupted: the trailer of the ring rank " + writer +
            " writes to rank " + reader + " (byte " + segment.trailerOffset(writer < reader) + " of " +
            segment.file() + ") holds " + problem + ", which neither rank can have written. Another process wrote " +
            "into the segment: stop whatever writes into " + segment.file().getParent() + " (" +
            ShmTransportProvider.DIR.variable() + ") while jobs run", null);
    }
}
