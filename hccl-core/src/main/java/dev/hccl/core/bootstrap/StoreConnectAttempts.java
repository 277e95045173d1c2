package dev.hccl.core.bootstrap;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;

/**
 * What a rank's tries to reach rank 0's store met, and the error when it gives up: a store that turned it away (it is
 * crowded: {@link TurnedAway}) is told apart from one that is not there. Not thread-safe: one per connect.
 */
final class StoreConnectAttempts
{
    /**
     * The store closed the connection before it answered the challenge, or answered that it serves as many clients as
     * it may: it is crowded, and the client tries again.
     */
    static final class TurnedAway extends IOException
    {
        private static final long serialVersionUID = 1L;
        /** Full of clients that proved the key, rather than of connections in the challenge. */
        private final boolean admittedFull;

        /**
         * @param admittedFull whether the store said it serves as many clients as it may.
         * @param cause        what the connection met (its end), or null.
         */
        TurnedAway(final boolean admittedFull, final Exception cause)
        {
            super(admittedFull ? "the store serves as many clients of the job as it may at once" :
                "the store closed the connection before it answered the challenge", cause);
            this.admittedFull = admittedFull;
        }
    }

    private IOException last;
    /** The last turn-away since a store last listened, and how many there were. */
    private TurnedAway crowded;
    private int turnedAway;

    /**
     * Counts a try that failed.
     *
     * @param failure what it met.
     */
    void failed(final IOException failure)
    {
        last = failure;
        if (failure instanceof TurnedAway t)
        {
            crowded = t;
            turnedAway++;
        }
        else if (failure instanceof ConnectException)
        {
            crowded = null; // no store listens any more
            turnedAway = 0;
        }
    }

    /**
     * @return what the last try met, or null before any failed.
     */
    IOException last()
    {
        return last;
    }

    /**
     * The error of a rank that gives up: turned away since a store last listened, the store is crowded, whatever the
     * last try met (its deadline, say); else the store is not there.
     *
     * @param address the store.
     * @param rank    this rank.
     * @param tls     whether the rank speaks TLS.
     * @return {@link ErrorCode#E_TCP_CONNECT}, saying which and what to check.
     */
    HcclException gaveUp(final InetSocketAddress address, final int rank, final boolean tls)
    {
        if (crowded != null)
        {
            return new HcclException(ErrorCode.E_TCP_CONNECT, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE,
                "rank 0's rendezvous store at " + address + " turned this rank away " + turnedAway + " time" +
                (turnedAway == 1 ? "" : "s") + ": " + (crowded.admittedFull ?
                "it serves as many clients that proved the job token as it may (two a rank, and 16 more): is a " +
                "process of another job with this HCCL_JOB_TOKEN, or a loop of hccl-status, holding them?" :
                "it closed each connection before it answered the challenge, as it does when it is full of " +
                "connections that have not proven the job token: a process that is not a rank of the job floods " +
                "its port (rank 0 names the address in a WARN), or rank 0 runs another version of hccl-java, or is " +
                "too busy to answer within " + StoreLimits.HANDSHAKE_MILLIS / 1000 + " s. Stop that process, or " +
                "let only the job's hosts reach MASTER_PORT"), last);
        }
        return new HcclException(ErrorCode.E_TCP_CONNECT, rank, 0, Operation.INIT, HcclException.NO_SEQUENCE,
            "could not reach rank 0's rendezvous store at " + address + " (" + last + "): is rank 0 running, and are " +
            "MASTER_ADDR/MASTER_PORT (or the root info) right?" + (tls ? " Under mutual TLS the store also refuses " +
            "a rank whose certificate (HCCL_TLS_CERT) its HCCL_TLS_CA did not sign, and one that does not trust the " +
            "store's (HCCL_TLS_CA): check that every rank uses certificates of the same CA." : ""), last);
    }
}
