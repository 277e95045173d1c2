package dev.hccl.api.spi;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class DescriptorCodecTest
{
    @Test
    void decodesWhatWasEncodedAndReusesARepeatedDescriptor()
    {
        final DescriptorCodec codec = new DescriptorCodec();
        final int op = Operation.ALL_REDUCE.code();
        final OpDescriptor first = codec.decode(op, DescriptorCodec.code(DataType.FP32),
            DescriptorCodec.code(ReduceOp.SUM), OpDescriptor.NO_ROOT, 1000);
        assertEquals(new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1000),
            first);
        assertSame(first, codec.decode(op, DataType.FP32.code(), ReduceOp.SUM.code(), -1, 1000),
            "every segment of an operation carries the same fingerprint: one object for them all");
        assertNotSame(first, codec.decode(op, DataType.FP32.code(), ReduceOp.SUM.code(), -1, 1001));

        final OpDescriptor barrier = codec.decode(Operation.BARRIER.code(), DescriptorCodec.code((DataType)null),
            DescriptorCodec.code((ReduceOp)null), OpDescriptor.NO_ROOT, 0);
        assertNull(barrier.dataType());
        assertNull(barrier.reduceOp());
    }

    @Test
    void refusesCodesThatNameNothingAndSaysWhich()
    {
        final DescriptorCodec codec = new DescriptorCodec();
        final int fp32 = DataType.FP32.code();
        final int sum = ReduceOp.SUM.code();
        final int ops = Operation.values().length;
        assertNull(codec.decode(ops, fp32, sum, 0, 1));
        assertEquals("bad operation code " + ops, DescriptorCodec.describeBad(ops, fp32, sum));
        assertNull(codec.decode(0, 66, sum, 0, 1));
        assertEquals("bad data type code 66", DescriptorCodec.describeBad(0, 66, sum));
        assertNull(codec.decode(0, fp32, 66, 0, 1));
        assertEquals("bad reduce op code 66", DescriptorCodec.describeBad(0, fp32, 66));
        assertNull(DescriptorCodec.describeBad(0, DescriptorCodec.NONE, DescriptorCodec.NONE));
    }

    /**
     * The codes are the wire protocol: ranks of one job agree on them whatever order a later version declares the
     * constants in. Renumbering one breaks this test, as it would break a job.
     */
    @Test
    void wireCodesAreFixed()
    {
        assertEquals(0, Operation.ALL_REDUCE.code());
        assertEquals(8, Operation.BARRIER.code());
        assertEquals(15, Operation.GATHER.code());
        assertEquals(0, DataType.INT8.code());
        assertEquals(7, DataType.FP32.code());
        assertEquals(8, DataType.FP64.code());
        assertEquals(9, DataType.FP8_E4M3.code());
        assertEquals(10, DataType.FP8_E5M2.code());
        assertEquals(0, ReduceOp.SUM.code());
        assertEquals(4, ReduceOp.AVG.code());
        for (final Operation op : Operation.values())
        {
            assertSame(op, Operation.fromCode(op.code()));
        }
        for (final DataType type : DataType.values())
        {
            assertSame(type, DataType.fromCode(type.code()));
        }
        for (final ReduceOp op : ReduceOp.values())
        {
            assertSame(op, ReduceOp.fromCode(op.code()));
        }
        assertNull(Operation.fromCode(DescriptorCodec.NONE));
        assertNull(DataType.fromCode(-1));
        assertNull(ReduceOp.fromCode(1000));
    }
}
