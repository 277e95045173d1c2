package dev.hccl.api;

/**
 * The failure of a communicator operation: carries an {@link ErrorCode}, the rank that reports it, the rank at fault
 * when one is known, the operation and its sequence number.
 */
public class HcclException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /** Value of {@link #rank()} and {@link #peer()} when not known. */
    public static final int UNKNOWN_RANK = -1;

    /** Value of {@link #sequence()} when the failure belongs to no numbered operation. */
    public static final long NO_SEQUENCE = -1;

    /** The category. */
    private final ErrorCode errorCode;
    /** The rank that reports the failure, or {@link #UNKNOWN_RANK}. */
    private final int rank;
    /** The rank at fault, or {@link #UNKNOWN_RANK}. */
    private final int peer;
    /** The operation that failed, or null. */
    private final Operation operation;
    /** The operation's sequence number, or {@link #NO_SEQUENCE}. */
    private final long sequence;
    /** What happened, without the context above. */
    private final String detail;

    /**
     * A failure with all its context.
     *
     * @param errorCode the category.
     * @param rank      the rank that reports the failure, or {@link #UNKNOWN_RANK}.
     * @param peer      the rank at fault (dead, mismatched, missing), or {@link #UNKNOWN_RANK}.
     * @param operation the operation that failed, or null.
     * @param sequence  the operation's sequence number in its communicator, or {@link #NO_SEQUENCE}.
     * @param message   what happened, in words.
     * @param cause     the underlying cause, or null.
     */
    public HcclException(
        final ErrorCode errorCode,
        final int rank,
        final int peer,
        final Operation operation,
        final long sequence,
        final String message,
        final Throwable cause)
    {
        super(format(errorCode, rank, operation, sequence, message), cause);
        this.errorCode = errorCode;
        this.rank = rank;
        this.peer = peer;
        this.operation = operation;
        this.sequence = sequence;
        this.detail = message;
    }

    /**
     * A failure with a category and a message only.
     *
     * @param errorCode the category.
     * @param message   what happened.
     */
    public HcclException(final ErrorCode errorCode, final String message)
    {
        this(errorCode, UNKNOWN_RANK, UNKNOWN_RANK, null, NO_SEQUENCE, message, null);
    }

    /**
     * A failure with a category, a message and a cause.
     *
     * @param errorCode the category.
     * @param message   what happened.
     * @param cause     the underlying cause.
     */
    public HcclException(final ErrorCode errorCode, final String message, final Throwable cause)
    {
        this(errorCode, UNKNOWN_RANK, UNKNOWN_RANK, null, NO_SEQUENCE, message, cause);
    }

    /**
     * The category.
     *
     * @return the error code.
     */
    public ErrorCode errorCode()
    {
        return errorCode;
    }

    /**
     * The rank that reports the failure.
     *
     * @return the rank, or {@link #UNKNOWN_RANK}.
     */
    public int rank()
    {
        return rank;
    }

    /**
     * The rank at fault: the peer that died, disconnected, issued another operation or never arrived.
     *
     * @return the rank, or {@link #UNKNOWN_RANK}.
     */
    public int peer()
    {
        return peer;
    }

    /**
     * The operation that failed.
     *
     * @return the operation, or null when the failure belongs to none.
     */
    public Operation operation()
    {
        return operation;
    }

    /**
     * The sequence number of the failed operation in its communicator.
     *
     * @return the sequence number, or {@link #NO_SEQUENCE}.
     */
    public long sequence()
    {
        return sequence;
    }

    /**
     * What happened, without the code, rank and operation that {@link #getMessage()} puts in front.
     *
     * @return the message as given.
     */
    public String detail()
    {
        return detail;
    }

    private static String format(
        final ErrorCode errorCode, final int rank, final Operation operation, final long sequence, final String message)
    {
        final StringBuilder sb = new StringBuilder(96).append(errorCode.name());
        if (rank != UNKNOWN_RANK)
        {
            sb.append(" rank ").append(rank);
        }
        if (operation != null)
        {
            sb.append(' ').append(operation.displayName());
            if (sequence != NO_SEQUENCE)
            {
                sb.append(" #").append(sequence);
            }
        }
        return sb.append(": ").append(message).toString();
    }
}
