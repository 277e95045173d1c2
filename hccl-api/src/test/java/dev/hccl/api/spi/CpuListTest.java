package dev.hccl.api.spi;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CpuListTest
{
    @Test
    void cpuListsParseAndFormatAsLinuxWritesThem()
    {
        final TreeSet<Integer> cpus = CpuList.parse("0-3,8,10-11\n");
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), List.copyOf(cpus));
        assertEquals("0-3,8,10-11", CpuList.format(cpus));
        assertEquals("5", CpuList.format(CpuList.parse("5")));
        assertTrue(CpuList.parse(" ").isEmpty());
        assertEquals("", CpuList.format(new TreeSet<>()));
        assertThrows(NumberFormatException.class, () -> CpuList.parse("0-x"));
        assertEquals(CpuList.MAX_CPU + 1, CpuList.parse("0-" + CpuList.MAX_CPU).size());
        assertThrows(NumberFormatException.class, () -> CpuList.parse("0-2147483647"),
            "a list a peer published cannot make a set of billions");
    }

    @Test
    void thisProcessMayRunOnTheCpusLinuxLists() throws Exception
    {
        final TreeSet<Integer> allowed = CpuList.allowed();
        assertFalse(allowed.isEmpty());
        assertEquals(CpuList.format(allowed), CpuList.allowedOrUnknown());
        assertTrue(allowed.size() >= Runtime.getRuntime().availableProcessors(),
            "the JVM counts no more CPUs than the process may run on: " + allowed);
    }
}
