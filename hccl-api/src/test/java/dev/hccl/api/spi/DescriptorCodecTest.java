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
        final int op = Operation.ALL_REDUCE.ordinal();
        final OpDescriptor first = codec.decode(op, DescriptorCodec.code(DataType.FP32),
            DescriptorCodec.code(ReduceOp.SUM), OpDescriptor.NO_ROOT, 1000);
        assertEquals(new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1000),
            first);
        assertSame(first, codec.decode(op, DataType.FP32.ordinal(), ReduceOp.SUM.ordinal(), -1, 1000),
            "every segment of an operation carries the same fingerprint: one object for them all");
        assertNotSame(first, codec.decode(op, DataType.FP32.ordinal(), ReduceOp.SUM.ordinal(), -1, 1001));

        final OpDescriptor barrier = codec.decode(Operation.BARRIER.ordinal(), DescriptorCodec.code((DataType)null),
            DescriptorCodec.code((ReduceOp)null), OpDescriptor.NO_ROOT, 0);
        assertNull(barrier.dataType());
        assertNull(barrier.reduceOp());
    }

    @Test
    void refusesOrdinalsThatNameNothingAndSaysWhich()
    {
        final DescriptorCodec codec = new DescriptorCodec();
        final int fp32 = DataType.FP32.ordinal();
        final int sum = ReduceOp.SUM.ordinal();
        final int ops = Operation.values().length;
        assertNull(codec.decode(ops, fp32, sum, 0, 1));
        assertEquals("bad operation ordinal " + ops, DescriptorCodec.describeBad(ops, fp32, sum));
        assertNull(codec.decode(0, 66, sum, 0, 1));
        assertEquals("bad data type ordinal 66", DescriptorCodec.describeBad(0, 66, sum));
        assertNull(codec.decode(0, fp32, 66, 0, 1));
        assertEquals("bad reduce op ordinal 66", DescriptorCodec.describeBad(0, fp32, 66));
        assertNull(DescriptorCodec.describeBad(0, DescriptorCodec.NONE, DescriptorCodec.NONE));
    }
}
