package dev.hccl.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Ranks started as HCCL's jobs are: a rank table ({@code RANK_TABLE_FILE}) and each process's {@code RANK_ID}, with
 * no world size and no rank 0 address besides the table; each finds its world, rank 0 and its node from the table,
 * and checks every collective.
 */
@Timeout(300)
class RankTableLaunchTest
{
    private static final int RANKS = 3;

    @TempDir
    Path dir;

    @Test
    void ranksOfARankTableFindEachOtherAndComputeRight() throws Exception
    {
        final Path table = Files.writeString(dir.resolve("hccl.json"), """
            {"status": "completed", "version": "1.0", "server_count": "1",
             "server_list": [{"server_id": "127.0.0.1", "device": [
               {"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"},
               {"device_id": "1", "device_ip": "192.168.101.101", "rank_id": "1"},
               {"device_id": "2", "device_ip": "192.168.102.101", "rank_id": "2"}]}]}
            """);
        final String port = Integer.toString(TcpConformanceTest.freePort());
        final List<Map<String, String>> ranks = new ArrayList<>();
        for (int r = 0; r < RANKS; r++)
        {
            ranks.add(Map.of("RANK_TABLE_FILE", table.toString(), "RANK_ID", Integer.toString(r), "MASTER_PORT",
                port));
        }
        ForeignLaunch.runAndCheck(ranks);
    }
}
