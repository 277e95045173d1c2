package dev.hccl.bench.check;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The expected results of all-reduce cases, computed once for ranks that check them in one JVM, as a test running
 * every rank as a thread does. Alone, each of n ranks computes every element's reduction of all n inputs: n^2 inputs
 * an element between them, which outweighed the collective itself at a million elements. Shared, the ranks take one
 * table; it is dropped when the last of them has taken it.
 * <p>
 * Ranks must check the same cases with the same seeds (as {@link CollectiveCheck} requires anyway); a rank that never
 * takes its case's table (it failed first) leaves that table here until this object goes.
 */
public final class SharedReference
{
    private final int ranks;
    private final ConcurrentHashMap<Key, Table> tables = new ConcurrentHashMap<>();

    /**
     * For the ranks of one communicator.
     *
     * @param ranks how many ranks take each table: the communicator's size.
     */
    public SharedReference(final int ranks)
    {
        if (ranks < 1)
        {
            throw new IllegalArgumentException("ranks " + ranks);
        }
        this.ranks = ranks;
    }

    /**
     * The all-reduce result of a case, element by element, as {@link Reference#reduced} gives it.
     *
     * @param c    an all-reduce case.
     * @param seed its seed.
     * @return its elements' bits; not to be changed.
     */
    long[] allReduced(final CheckCase c, final long seed)
    {
        final Key key = new Key(c, seed);
        final Table table = tables.computeIfAbsent(key, k ->
        {
            final long[] values = new long[c.count()];
            for (int i = 0; i < values.length; i++)
            {
                values[i] = Reference.reduced(seed, ranks, i, c.type(), c.reduceOp());
            }
            return new Table(values);
        });
        synchronized (table)
        {
            if (++table.takers == ranks)
            {
                tables.remove(key);
            }
        }
        return table.values;
    }

    /**
     * How many tables some rank has yet to take: none once every rank has checked every case it began.
     *
     * @return the tables held.
     */
    int held()
    {
        return tables.size();
    }

    private record Key(CheckCase c, long seed)
    {
    }

    private static final class Table
    {
        final long[] values;
        int takers;

        Table(final long[] values)
        {
            this.values = values;
        }
    }
}
