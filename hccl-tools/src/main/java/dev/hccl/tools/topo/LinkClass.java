package dev.hccl.tools.topo;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The class of the path between two ranks, as {@code nvidia-smi topo -m} names the path between two GPUs.
 */
public enum LinkClass
{
    /** A rank and itself. */
    SELF("X", "Self"),

    /** Two ranks on the same node, through shared memory. */
    SHM("SHM", "Same node: the ranks reach each other through shared memory"),

    /** Two ranks on the same node, through the node's TCP loopback. */
    LOC("LOC", "Same node, not through shared memory: TCP loopback, or threads of one JVM"),

    /** Two ranks on different nodes. */
    NET("NET", "Different nodes: the ranks reach each other over the network between the nodes");

    private final String label;
    private final String meaning;

    LinkClass(final String label, final String meaning)
    {
        this.label = label;
        this.meaning = meaning;
    }

    /**
     * The label in the matrix and in the JSON file.
     *
     * @return {@code X}, {@code LOC} or {@code NET}.
     */
    @JsonValue
    public String label()
    {
        return label;
    }

    /**
     * What the label means, for the legend.
     *
     * @return one sentence.
     */
    public String meaning()
    {
        return meaning;
    }

    /**
     * The class of the path between two ranks.
     *
     * @param rankA one rank.
     * @param nodeA the node it runs on.
     * @param rankB the other rank.
     * @param nodeB the node it runs on.
     * @return {@link #SELF} for one rank, {@link #LOC} for one node, {@link #NET} otherwise.
     */
    public static LinkClass of(final int rankA, final int nodeA, final int rankB, final int nodeB)
    {
        return of(rankA, nodeA, rankB, nodeB, false);
    }

    /**
     * The class of the path between two ranks, knowing the transport the pair uses.
     *
     * @param rankA        one rank.
     * @param nodeA        the node it runs on.
     * @param rankB        the other rank.
     * @param nodeB        the node it runs on.
     * @param sharedMemory whether the pair's transport is shared memory.
     * @return {@link #SELF} for one rank, {@link #SHM} or {@link #LOC} for one node, {@link #NET} otherwise.
     */
    public static LinkClass of(
        final int rankA, final int nodeA, final int rankB, final int nodeB, final boolean sharedMemory)
    {
        if (rankA == rankB)
        {
            return SELF;
        }
        if (nodeA != nodeB)
        {
            return NET;
        }
        return sharedMemory ? SHM : LOC;
    }
}
