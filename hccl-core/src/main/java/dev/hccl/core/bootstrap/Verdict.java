package dev.hccl.core.bootstrap;

import dev.hccl.api.ErrorCode;

/**
 * Why a rendezvous was given up, as every rank reports it: the error code, the rank it concerns and the reason.
 *
 * @param code   the error.
 * @param rank   the rank concerned, or {@code HcclException.UNKNOWN_RANK}.
 * @param reason why, in words.
 */
record Verdict(ErrorCode code, int rank, String reason)
{
    /**
     * The error with a numeric code, as the store's protocol carries it.
     *
     * @param code {@link ErrorCode#code()}.
     * @return the error, or {@link ErrorCode#E_INTERNAL} for a code this version does not know.
     */
    static ErrorCode codeOf(final int code)
    {
        for (final ErrorCode e : ErrorCode.values())
        {
            if (e.code() == code)
            {
                return e;
            }
        }
        return ErrorCode.E_INTERNAL;
    }
}
