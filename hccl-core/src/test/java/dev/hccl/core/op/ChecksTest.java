package dev.hccl.core.op;

import dev.hccl.api.DataType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ChecksTest
{
    /**
     * A buffer that is exactly an operation's region is that region: the call allocates no slice. Any other is
     * sliced, from its position, to the operation's bytes, in native order, and the caller's buffer stays as it was.
     */
    @Test
    void aBufferOfTheOperationsExactSizeIsItsOwnRegion()
    {
        final ByteBuffer exact = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
        assertSame(exact, Checks.region("send", exact, 16, DataType.FP32, false));

        final ByteBuffer larger = ByteBuffer.allocateDirect(32).order(ByteOrder.nativeOrder());
        larger.putInt(8, 7);
        larger.position(8);
        final ByteBuffer sliced = Checks.region("send", larger, 16, DataType.FP32, false);
        assertNotSame(larger, sliced);
        assertEquals(16, sliced.capacity());
        assertEquals(7, sliced.getInt(0));
        assertEquals(8, larger.position());
        assertEquals(32, larger.limit());

        final ByteBuffer shortLimit = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder()).limit(12);
        assertThrows(IllegalArgumentException.class, () -> Checks.region("recv", shortLimit, 16, DataType.FP32, true));
        final ByteBuffer bigEndianBytes = ByteBuffer.allocateDirect(16).order(
            ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
        final ByteBuffer bytesRegion = Checks.region("send", bigEndianBytes, 16, DataType.INT8, false);
        assertNotSame(bigEndianBytes, bytesRegion, "a region is read in native order, whatever the element size");
        assertEquals(ByteOrder.nativeOrder(), bytesRegion.order());
    }
}
