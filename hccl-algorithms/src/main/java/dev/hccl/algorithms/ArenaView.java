package dev.hccl.algorithms;

import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.RegisteredMemory;

import java.nio.ByteBuffer;

/**
 * An arena seen from a view ({@link SubGroup}) whose rank {@code m} is the arena's member {@code m}: the same memory,
 * signals and access, numbered as the view numbers its ranks.
 */
final class ArenaView implements NodeArena
{
    private final NodeArena whole;

    /**
     * @param whole the arena, as the parent group numbers it.
     */
    ArenaView(final NodeArena whole)
    {
        this.whole = whole;
    }

    @Override
    public int members()
    {
        return whole.members();
    }

    @Override
    public int member()
    {
        return whole.member();
    }

    @Override
    public int rankOf(final int member)
    {
        return member;
    }

    @Override
    public int regionBytes()
    {
        return whole.regionBytes();
    }

    @Override
    public ByteBuffer memory()
    {
        return whole.memory();
    }

    @Override
    public boolean enter()
    {
        return whole.enter();
    }

    @Override
    public void exit()
    {
        whole.exit();
    }

    /**
     * {@inheritDoc}
     * <p>
     * The whole arena's: its members are numbered as this view numbers them.
     */
    @Override
    public RegisteredMemory registeredMemory()
    {
        return whole.registeredMemory();
    }

    @Override
    public long[] finishedSteps()
    {
        return whole.finishedSteps();
    }

    @Override
    public void markFailed()
    {
        whole.markFailed();
    }

    @Override
    public int failedMember()
    {
        return whole.failedMember();
    }

    @Override
    public String damage()
    {
        return whole.damage();
    }

    @Override
    public boolean checksummed()
    {
        return whole.checksummed();
    }

    @Override
    public String corrupted(final String what)
    {
        return whole.corrupted(what);
    }

    @Override
    public long signal(final int index)
    {
        return whole.signal(index);
    }

    @Override
    public void signal(final int index, final long value)
    {
        whole.signal(index, value);
    }
}
