package dev.hccl.algorithms;

/**
 * What each member reads of another's data in one step of the node arena, from where that data starts
 * ({@link ArenaSteps#sourceAt}), so that under {@code HCCL_CHECKSUM} the writer covers with a CRC32C exactly what each
 * reader reads ({@link ArenaChecksums}): the whole piece, a slice each (an all-reduce's two rounds, whose reduced data
 * is the slices again), a block each (a reduce-scatter), the root's piece only (a broadcast), a chunk's piece each or
 * each member's own chunk's (within a node of the hierarchical algorithms), or nothing (a barrier).
 * <p>
 * One per {@link ArenaSteps}, set again for each step, so that a step allocates nothing.
 */
final class ArenaReads
{
    private enum Kind
    {
        NONE, WHOLE, SLICES, BLOCKS, ROOT, CHUNKS, OWN_CHUNK
    }

    private Kind kind = Kind.NONE;
    private int bytes;
    private int elements;
    private int elementSize;
    private int members;
    private int blockBytes;
    private int root;
    private Partition chunks;
    private int first;
    private int per;

    /**
     * Nothing is read.
     *
     * @return this.
     */
    ArenaReads none()
    {
        kind = Kind.NONE;
        return this;
    }

    /**
     * Every member reads the whole of every other's data.
     *
     * @param bytes the data's bytes.
     * @return this.
     */
    ArenaReads whole(final int bytes)
    {
        kind = Kind.WHOLE;
        this.bytes = bytes;
        return this;
    }

    /**
     * Member {@code r} reads slice {@code r} of the piece ({@link #sliceStart}).
     *
     * @param elements    the piece's elements.
     * @param elementSize bytes per element.
     * @param members     the slices.
     * @return this.
     */
    ArenaReads slices(final int elements, final int elementSize, final int members)
    {
        kind = Kind.SLICES;
        this.elements = elements;
        this.elementSize = elementSize;
        this.members = members;
        return this;
    }

    /**
     * Member {@code r} reads block {@code r}: blocks of {@code bytes} lie a block apart where the data is posted in
     * place, and {@code bytes} apart in a half.
     *
     * @param bytes      the bytes each reads.
     * @param blockBytes a block's bytes in the buffer posted in place.
     * @return this.
     */
    ArenaReads blocks(final int bytes, final int blockBytes)
    {
        kind = Kind.BLOCKS;
        this.bytes = bytes;
        this.blockBytes = blockBytes;
        return this;
    }

    /**
     * Every member reads the whole of the root's data, and nothing of the others'.
     *
     * @param root  the member whose data is read.
     * @param bytes its bytes.
     * @return this.
     */
    ArenaReads root(final int root, final int bytes)
    {
        kind = Kind.ROOT;
        this.root = root;
        this.bytes = bytes;
        return this;
    }

    /**
     * Member {@code r} reads its chunk's piece of every other's data (a hierarchical reduce-scatter within a node,
     * {@link NodeLevel}): pieces lie as the chunks do where the data is posted in place, {@code per} elements apart in
     * a half.
     *
     * @param chunks      the chunks, one per member.
     * @param first       the piece's first element within each chunk.
     * @param per         elements per piece.
     * @param elementSize bytes per element.
     * @return this.
     */
    ArenaReads chunks(final Partition chunks, final int first, final int per, final int elementSize)
    {
        return chunked(Kind.CHUNKS, chunks, first, per, elementSize);
    }

    /**
     * Every member reads the whole of each other's data, which is that member's chunk's piece (a hierarchical
     * all-gather within a node, {@link NodeLevel}).
     *
     * @param chunks      the chunks, one per member.
     * @param first       the piece's first element within each chunk.
     * @param per         elements per piece.
     * @param elementSize bytes per element.
     * @return this.
     */
    ArenaReads ownChunks(final Partition chunks, final int first, final int per, final int elementSize)
    {
        return chunked(Kind.OWN_CHUNK, chunks, first, per, elementSize);
    }

    private ArenaReads chunked(final Kind kind, final Partition chunks, final int first, final int per,
        final int elementSize)
    {
        this.kind = kind;
        this.chunks = chunks;
        this.first = first;
        this.per = per;
        this.elementSize = elementSize;
        return this;
    }

    /**
     * @return whether a member reads its own data back too, where it posted it (the whole piece, its own block):
     * elsewhere it reads its own data from its buffers, or not at all.
     */
    boolean readsOwn()
    {
        return kind == Kind.WHOLE || kind == Kind.BLOCKS;
    }

    /**
     * @return whether every reader reads the same range of a member's data.
     */
    boolean same()
    {
        return kind != Kind.SLICES && kind != Kind.BLOCKS && kind != Kind.CHUNKS;
    }

    /**
     * Where a reader's range of a member's data starts.
     *
     * @param inPlace whether the member posted its data in place (a block then lies a block apart).
     * @param reader  the member that reads.
     * @return bytes from where the data starts.
     */
    int start(final boolean inPlace, final int reader)
    {
        switch (kind)
        {
            case SLICES:
                return sliceStart(elements, elementSize, members, reader) * elementSize;
            case BLOCKS:
                return reader * (inPlace ? blockBytes : bytes);
            case CHUNKS:
                return inPlace ? chunks.chunkOffset(reader) : reader * per * elementSize;
            default:
                return 0;
        }
    }

    /**
     * How many bytes of a member's data a reader reads.
     *
     * @param member the member whose data it is.
     * @param reader the member that reads.
     * @return bytes; 0 for none.
     */
    int length(final int member, final int reader)
    {
        switch (kind)
        {
            case WHOLE:
            case BLOCKS:
                return bytes;
            case SLICES:
                return (sliceStart(elements, elementSize, members, reader + 1) -
                    sliceStart(elements, elementSize, members, reader)) * elementSize;
            case ROOT:
                return member == root ? bytes : 0;
            case CHUNKS:
                return NodeLevel.piece(chunks, reader, first, per) * elementSize;
            case OWN_CHUNK:
                return NodeLevel.piece(chunks, member, first, per) * elementSize;
            default:
                return 0;
        }
    }

    /**
     * Where a member's slice of a piece of {@code elements} starts: the piece cut into {@code members} slices of
     * whole cache lines where it can, the first slices one line longer when they do not come out even.
     *
     * @param elements    the piece's elements.
     * @param elementSize bytes per element.
     * @param members     the slices.
     * @param member      which slice; {@code members} gives the piece's end.
     * @return the slice's first element.
     */
    static int sliceStart(final int elements, final int elementSize, final int members, final int member)
    {
        final int unit = Math.max(1, ArenaSteps.LINE / elementSize);
        final int units = (elements + unit - 1) / unit;
        final int start = (member * (units / members) + Math.min(member, units % members)) * unit;
        return Math.min(elements, start);
    }
}
