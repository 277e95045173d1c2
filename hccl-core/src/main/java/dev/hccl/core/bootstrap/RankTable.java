package dev.hccl.core.bootstrap;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * HCCL's rank table ({@code RANK_TABLE_FILE}, the {@code hccl.json} that Ascend's operators write): a
 * {@code server_list} of servers, each with its {@code device}s and their {@code rank_id}s. It gives the job's world
 * size, rank 0's host ({@code host_ip} where the table has one, version 1.2, else {@code server_id}, an address in
 * version 1.0) and each rank's node: its place among its server's ranks, which are one node. Numbers may be JSON
 * numbers or strings, as HCCL writes them.
 */
public final class RankTable
{
    /** One rank: its server (index in the list) and its place there. */
    private record Place(int server, int localRank)
    {
    }

    private final Path file;
    private final List<String> hosts = new ArrayList<>();
    private final List<Integer> serverSizes = new ArrayList<>();
    private final Map<Integer, Place> places = new HashMap<>();

    private RankTable(final Path file)
    {
        this.file = file;
    }

    /**
     * @param file the table.
     * @return the table, checked: every rank from 0 to its size once.
     * @throws HcclException {@link ErrorCode#E_ENV} naming the file and what is wrong with it.
     */
    static RankTable read(final Path file)
    {
        final String text;
        try
        {
            text = Files.readString(file, StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            throw problem(file, "cannot be read: " + ex);
        }
        final RankTable table = new RankTable(file);
        try
        {
            table.parse(new JSONObject(text));
        }
        catch (final JSONException ex)
        {
            throw problem(file, "is not a rank table: " + ex.getMessage());
        }
        return table;
    }

    private void parse(final JSONObject root)
    {
        final String status = root.optString("status", "completed");
        if (!"completed".equals(status))
        {
            throw problem(file, "has status \"" + status + "\", not \"completed\": its writer has not finished it");
        }
        final JSONArray servers = root.getJSONArray("server_list");
        for (int s = 0; s < servers.length(); s++)
        {
            final JSONObject server = servers.getJSONObject(s);
            final String host = server.has("host_ip") ? server.getString("host_ip") : server.getString("server_id");
            final JSONArray devices = server.getJSONArray("device");
            final List<Integer> ranks = new ArrayList<>();
            for (int d = 0; d < devices.length(); d++)
            {
                ranks.add(number(devices.getJSONObject(d), "rank_id", "server " + s + "'s device " + d));
            }
            ranks.sort(null);
            for (int local = 0; local < ranks.size(); local++)
            {
                final Place earlier = places.put(ranks.get(local), new Place(s, local));
                if (earlier != null)
                {
                    throw problem(file, "lists rank " + ranks.get(local) + " twice: on server " + earlier.server() +
                        " (" + hosts.get(earlier.server()) + ") and on server " + s + " (" + host + ")");
                }
            }
            hosts.add(host);
            serverSizes.add(ranks.size());
        }
        if (places.isEmpty())
        {
            throw problem(file, "lists no rank");
        }
        for (int r = 0; r < places.size(); r++)
        {
            if (!places.containsKey(r))
            {
                throw problem(file, "lists " + places.size() + " ranks but not rank " + r + ": the ranks must be " +
                    "0 to " + (places.size() - 1) + ", each once");
            }
        }
    }

    private int number(final JSONObject object, final String key, final String where)
    {
        final Object value = object.get(key);
        try
        {
            final int n = Integer.parseInt(value.toString().trim());
            if (n < 0)
            {
                throw new NumberFormatException("negative");
            }
            return n;
        }
        catch (final NumberFormatException ex)
        {
            throw problem(file, "has " + key + " \"" + value + "\" for " + where + ": not a rank number");
        }
    }

    int worldSize()
    {
        return places.size();
    }

    /**
     * @return rank 0's host: its server's {@code host_ip}, else its {@code server_id}.
     */
    String rank0Host()
    {
        return hosts.get(places.get(0).server());
    }

    int localRank(final int rank)
    {
        return places.get(rank).localRank();
    }

    int localSize(final int rank)
    {
        return serverSizes.get(places.get(rank).server());
    }

    /**
     * A configuration whose world size, rank 0's host and this rank's node come from the table, where nothing else
     * gave them; it must agree with a world size that was given.
     *
     * @param config the configuration, naming the table.
     * @return the configuration with the table's launch.
     * @throws HcclException {@link ErrorCode#E_ENV} when the rank is not given or not in the table, or the sizes
     *                       disagree.
     */
    public static CommConfig apply(final CommConfig config)
    {
        final Path file = Path.of(config.get(CommConfig.RANK_TABLE_FILE));
        final RankTable table = read(file);
        if (config.given(CommConfig.WORLD_SIZE) && config.worldSize() != table.worldSize())
        {
            throw problem(file, "lists " + table.worldSize() + " ranks, but the world size given is " +
                config.worldSize() + " (" + CommConfig.WORLD_SIZE + ", RANK_SIZE, ...): make them agree");
        }
        if (!config.given(CommConfig.RANK))
        {
            throw problem(file, "says there are " + table.worldSize() + " ranks, but not which this process is: set " +
                "RANK_ID (or RANK) for each process");
        }
        final int rank = config.rank();
        if (rank >= table.worldSize())
        {
            throw problem(file, "lists ranks 0 to " + (table.worldSize() - 1) + ", not this process's rank " + rank);
        }
        return config.launchedBy(table.worldSize(), table.rank0Host(), table.localRank(rank), table.localSize(rank));
    }

    private static HcclException problem(final Path file, final String what)
    {
        return new HcclException(ErrorCode.E_ENV, "RANK_TABLE_FILE " + file + " " + what);
    }
}
