package dev.hccl.api.spi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The access mode behind {@link NodeArena}'s signals: longs of a direct buffer in native order, with memory-ordering
 * modes.
 */
final class ArenaSignals
{
    /** The view; acquire and release need 8-byte-aligned indexes of a direct buffer. */
    static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private ArenaSignals()
    {
    }
}
