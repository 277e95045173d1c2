package dev.hccl.core.op;

import dev.hccl.api.spi.ProgressEngine;

import java.util.concurrent.locks.LockSupport;

/**
 * What a wait for a signal in the node arena hands its {@link dev.hccl.api.spi.WaitPolicy}: an engine with no I/O
 * that parks for the time asked and does not wake on arrival, so that the policy spins, yields, then parks in short
 * growing naps, as it does over shared-memory rings. The waiting thread polls the transports itself between naps
 * when it drives them.
 */
final class SignalPark implements ProgressEngine
{
    /** The one engine; stateless. */
    static final SignalPark ENGINE = new SignalPark();

    private SignalPark()
    {
    }

    @Override
    public boolean enter()
    {
        return true;
    }

    @Override
    public void exit()
    {
    }

    @Override
    public int poll(final long waitNanos)
    {
        if (waitNanos > 0)
        {
            LockSupport.parkNanos(this, waitNanos);
        }
        return 0;
    }

    @Override
    public boolean wakesOnArrival()
    {
        return false;
    }
}
