package dev.hccl.api;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SlurmHostlistTest
{
    @Test
    void expandsRangesListsAndPaddingInOrder()
    {
        assertEquals(List.of("node01", "node02", "node03", "node04", "node07"),
            SlurmHostlist.expand("node[01-04,07]", 100));
        assertEquals(List.of("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"),
            SlurmHostlist.expand("rack[1-2]-n[1-2]", 100));
        assertEquals(List.of("a", "b9", "b10", "c"), SlurmHostlist.expand("a,b[9-10],c", 100));
        assertEquals(List.of("gpu-008", "gpu-009", "gpu-010"), SlurmHostlist.expand("gpu-[008-010]", 100));
        assertEquals(List.of("localhost"), SlurmHostlist.expand("localhost", 100));
    }

    @Test
    void theFirstHostIsTask0sNode()
    {
        assertEquals("node01", SlurmHostlist.first("node[01-04,07]"));
        assertEquals("x7", SlurmHostlist.first("x[7,1-3]"));
        assertEquals("cn001", SlurmHostlist.first("cn[001-999999999]"), "no expansion beyond the first");
    }

    @Test
    void malformedListsAreRefusedNamingThem()
    {
        for (final String bad : new String[] {"node[01-04", "node01-04]", "node[a-b]", "node[4-1]", "", "a,,b",
            "n[[1]]", "n[1-]"})
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> SlurmHostlist.expand(bad, 100), bad);
            assertTrue(ex.getMessage().startsWith("Slurm host list '" + bad + "' is malformed: "), ex.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> SlurmHostlist.expand("n[0-99999999]", Integer.MAX_VALUE));
    }
}
