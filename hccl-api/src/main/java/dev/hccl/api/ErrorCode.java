package dev.hccl.api;

/**
 * Error categories, modelled on {@code HcclResult}; the numeric codes are HCCL's where HCCL has one.
 */
public enum ErrorCode
{
    /** A parameter was invalid ({@code HCCL_E_PARA}). */
    E_PARA(1),
    /** An internal error: a bug in hccl-java ({@code HCCL_E_INTERNAL}). */
    E_INTERNAL(4),
    /** The operation or configuration is not supported ({@code HCCL_E_NOT_SUPPORT}). */
    E_NOT_SUPPORT(5),
    /** The communicator is closed or unusable ({@code HCCL_E_UNAVAIL}). */
    E_UNAVAIL(7),
    /** A wait exceeded its timeout ({@code HCCL_E_TIMEOUT}). */
    E_TIMEOUT(9),
    /** A TCP connection could not be made, or was refused ({@code HCCL_E_TCP_CONNECT}). */
    E_TCP_CONNECT(11),
    /** A TCP connection failed while carrying data ({@code HCCL_E_TCP_TRANSFER}). */
    E_TCP_TRANSFER(13),
    /** A remote rank failed or aborted ({@code HCCL_E_REMOTE}). */
    E_REMOTE(20),
    /** Ranks issued different operations at the same sequence number (no HCCL equivalent). */
    E_MISMATCH(100),
    /** The environment is not set up as the library needs (a missing JVM flag, say). */
    E_ENV(101),
    /**
     * Two threads issued operations on one communicator at once, so their order was decided by a race (no HCCL
     * equivalent: HCCL and NCCL leave it undefined).
     */
    E_CONCURRENT(102),
    /**
     * A shared-memory segment between two ranks of a node is damaged: its file was truncated under the mapping, or it
     * holds a value its writer cannot have written, so another process wrote into it (no HCCL equivalent).
     */
    E_SHM_SEGMENT(103);

    private final int code;

    ErrorCode(final int code)
    {
        this.code = code;
    }

    /**
     * The numeric code.
     *
     * @return the code, equal to HCCL's {@code HcclResult} value where one exists.
     */
    public int code()
    {
        return code;
    }
}
