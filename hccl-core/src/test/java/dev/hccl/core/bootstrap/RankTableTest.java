package dev.hccl.core.bootstrap;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * HCCL's rank table as the launch description: the world size, rank 0's host and each rank's node come from it, the
 * rank from RANK_ID; every way a table can be wrong is an E_ENV error naming the file and the fault.
 */
class RankTableTest
{
    /** Version 1.0 as HCCL writes it: numbers as strings, server_id an address. */
    private static final String V1_0 = """
        {"status": "completed", "version": "1.0", "server_count": "2",
         "server_list": [
          {"server_id": "10.0.0.1", "device": [
            {"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"},
            {"device_id": "1", "device_ip": "192.168.101.101", "rank_id": "1"}]},
          {"server_id": "10.0.0.2", "device": [
            {"device_id": "0", "device_ip": "192.168.100.102", "rank_id": "3"},
            {"device_id": "1", "device_ip": "192.168.101.102", "rank_id": "2"}]}]}
        """;

    @TempDir
    Path dir;

    private Path write(final String json) throws IOException
    {
        return Files.writeString(dir.resolve("hccl.json"), json);
    }

    private static CommConfig config(final Path table, final String... more)
    {
        final Map<String, String> env = new HashMap<>(Map.of("RANK_TABLE_FILE", table.toString()));
        for (int i = 0; i < more.length; i += 2)
        {
            env.put(more[i], more[i + 1]);
        }
        return CommConfig.builder().environment(env).conclude();
    }

    @Test
    void theTableGivesTheWorldRankZerosHostAndTheNode() throws IOException
    {
        final CommConfig c = RankTable.apply(config(write(V1_0), "RANK_ID", "3"));
        assertEquals(3, c.rank());
        assertEquals(4, c.worldSize());
        assertEquals("10.0.0.1", c.masterAddr());
        assertEquals(1, c.localRank(), "rank 3 is the second of its server's ranks 2 and 3");
        assertEquals(2, c.localSize());
        assertEquals("4 (config)", c.describe().get("WORLD_SIZE"));
        assertEquals(3, RankTable.apply(config(write(V1_0), "RANK_ID", "3", "RANK_SIZE", "4")).rank());
        assertEquals("head", RankTable.apply(config(write(V1_0), "RANK_ID", "1", "MASTER_ADDR", "head")).masterAddr(),
            "a MASTER_ADDR given wins");
    }

    @Test
    void version12sHostIpIsRankZerosHost() throws IOException
    {
        final Path table = write("""
            {"status": "completed", "version": "1.2", "server_list": [
              {"server_id": "node-a", "host_ip": "10.0.0.9", "device": [{"device_id": 0, "rank_id": 0}]},
              {"server_id": "node-b", "host_ip": "10.0.0.8", "device": [{"device_id": 0, "rank_id": 1}]}]}
            """);
        final CommConfig c = RankTable.apply(config(table, "RANK", "1"));
        assertEquals("10.0.0.9", c.masterAddr());
        assertEquals(2, c.worldSize());
        assertEquals(0, c.localRank());
        assertEquals(1, c.localSize());
    }

    @Test
    void everyFaultIsNamed() throws IOException
    {
        assertFault(V1_0.replace("\"rank_id\": \"2\"", "\"rank_id\": \"1\""), "lists rank 1 twice: on server 0 " +
            "(10.0.0.1) and on server 1 (10.0.0.2)", "RANK_ID", "0");
        assertFault(V1_0.replace("\"rank_id\": \"2\"", "\"rank_id\": \"7\""), "lists 4 ranks but not rank 2",
            "RANK_ID", "0");
        assertFault(V1_0.replace("completed", "initializing"), "has status \"initializing\", not \"completed\"",
            "RANK_ID", "0");
        assertFault(V1_0.replace("\"rank_id\": \"3\"", "\"rank_id\": \"three\""), "has rank_id \"three\" for " +
            "server 1's device 0: not a rank number", "RANK_ID", "0");
        assertFault("{\"server_list\": [", "is not a rank table: ", "RANK_ID", "0");
        assertFault("{\"status\": \"completed\"}", "is not a rank table: JSONObject[\"server_list\"] not found",
            "RANK_ID", "0");
        assertFault(V1_0, "lists 4 ranks, but the world size given is 8", "RANK_ID", "0", "RANK_SIZE", "8");
        assertFault(V1_0, "says there are 4 ranks, but not which this process is: set RANK_ID");
        assertFault(V1_0, "lists ranks 0 to 3, not this process's rank 5", "RANK_ID", "5");
        final HcclException missing = assertThrows(HcclException.class,
            () -> RankTable.apply(config(dir.resolve("absent.json"), "RANK_ID", "0")));
        assertTrue(missing.getMessage().contains("absent.json cannot be read"), missing.getMessage());
    }

    private void assertFault(final String json, final String message, final String... env) throws IOException
    {
        final Path table = write(json);
        final HcclException ex = assertThrows(HcclException.class, () -> RankTable.apply(config(table, env)));
        assertEquals(ErrorCode.E_ENV, ex.errorCode());
        assertTrue(ex.getMessage().contains("RANK_TABLE_FILE " + table + " " + message), ex.getMessage());
    }
}
