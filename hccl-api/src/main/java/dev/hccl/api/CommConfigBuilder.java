package dev.hccl.api;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import static dev.hccl.api.CommConfig.ALGO;
import static dev.hccl.api.CommConfig.CONNECT_TIMEOUT;
import static dev.hccl.api.CommConfig.DETERMINISTIC;
import static dev.hccl.api.CommConfig.EAGER_BUDGET;
import static dev.hccl.api.CommConfig.EXEC_TIMEOUT;
import static dev.hccl.api.CommConfig.IF_IP;
import static dev.hccl.api.CommConfig.JOB_TOKEN;
import static dev.hccl.api.CommConfig.LOCAL_RANK;
import static dev.hccl.api.CommConfig.LOCAL_WORLD_SIZE;
import static dev.hccl.api.CommConfig.MASTER_ADDR;
import static dev.hccl.api.CommConfig.MASTER_PORT;
import static dev.hccl.api.CommConfig.NODE_ID;
import static dev.hccl.api.CommConfig.RANK;
import static dev.hccl.api.CommConfig.ROOT_INFO;
import static dev.hccl.api.CommConfig.SEGMENT_SIZE;
import static dev.hccl.api.CommConfig.SOCKET_IFNAME;
import static dev.hccl.api.CommConfig.TOPO_PROBE;
import static dev.hccl.api.CommConfig.WORLD_SIZE;

/**
 * Builds a {@link CommConfig} ({@link CommConfig#builder()}): collects explicit values; {@link #conclude()} resolves
 * the rest from the environment and defaults, then validates.
 */
public final class CommConfigBuilder
{
    private Map<String, String> env = System.getenv();
    private final Map<Setting<?>, Object> explicit = new HashMap<>();

    CommConfigBuilder()
    {
    }

    /**
     * Reads variables from this map instead of the process environment (for tests and embedding).
     *
     * @param env the variables.
     * @return this.
     */
    public CommConfigBuilder environment(final Map<String, String> env)
    {
        this.env = Objects.requireNonNull(env, "env");
        return this;
    }

    /**
     * Sets any setting, the library's or a transport's, as if its variable said so.
     *
     * @param setting the setting.
     * @param value   its value; null unsets an earlier call.
     * @param <T>     its type.
     * @return this.
     */
    public <T> CommConfigBuilder set(final Setting<T> setting, final T value)
    {
        if (null == value)
        {
            explicit.remove(setting);
        }
        else
        {
            explicit.put(setting, value);
        }
        return this;
    }

    /**
     * This process's rank.
     *
     * @param rank 0 to worldSize - 1.
     * @return this.
     */
    public CommConfigBuilder rank(final int rank)
    {
        return set(RANK, rank);
    }

    /**
     * Number of ranks.
     *
     * @param worldSize at least 1.
     * @return this.
     */
    public CommConfigBuilder worldSize(final int worldSize)
    {
        return set(WORLD_SIZE, worldSize);
    }

    /**
     * Rank within the node.
     *
     * @param localRank at least 0, or {@link CommConfig#DERIVE}.
     * @return this.
     */
    public CommConfigBuilder localRank(final int localRank)
    {
        return set(LOCAL_RANK, localRank);
    }

    /**
     * Ranks on this node.
     *
     * @param localSize at least 1, or {@link CommConfig#DERIVE}.
     * @return this.
     */
    public CommConfigBuilder localSize(final int localSize)
    {
        return set(LOCAL_WORLD_SIZE, localSize);
    }

    /**
     * Address of rank 0's store.
     *
     * @param masterAddr host name or address.
     * @return this.
     */
    public CommConfigBuilder masterAddr(final String masterAddr)
    {
        return set(MASTER_ADDR, masterAddr);
    }

    /**
     * Port of rank 0's store.
     *
     * @param masterPort 0 to 65535 (0: any free port, for a store this process starts).
     * @return this.
     */
    public CommConfigBuilder masterPort(final int masterPort)
    {
        return set(MASTER_PORT, masterPort);
    }

    /**
     * Root info from {@code Hccl.getRootInfo()}.
     *
     * @param rootInfo the string.
     * @return this.
     */
    public CommConfigBuilder rootInfo(final String rootInfo)
    {
        return set(ROOT_INFO, rootInfo);
    }

    /**
     * How long to wait for every rank to arrive and connect.
     *
     * @param timeout positive.
     * @return this.
     */
    public CommConfigBuilder connectTimeout(final Duration timeout)
    {
        return set(CONNECT_TIMEOUT, timeout);
    }

    /**
     * How long any wait of an operation may last.
     *
     * @param timeout positive.
     * @return this.
     */
    public CommConfigBuilder execTimeout(final Duration timeout)
    {
        return set(EXEC_TIMEOUT, timeout);
    }

    /**
     * Largest frame payload accepted from a peer, in bytes (finer than {@link CommConfig#BUFFSIZE}'s MiB).
     *
     * @param bytes at least the segment size.
     * @return this.
     */
    public CommConfigBuilder maxFrameBytes(final int bytes)
    {
        return set(CommConfig.MAX_FRAME_BYTES, bytes);
    }

    /**
     * Bytes per pipelined segment.
     *
     * @param bytes a multiple of 8 in [1 KiB, 64 MiB].
     * @return this.
     */
    public CommConfigBuilder segmentBytes(final int bytes)
    {
        return set(SEGMENT_SIZE, bytes);
    }

    /**
     * Bytes each peer may send ahead of this rank's receives ({@link CommConfig#EAGER_BUDGET}).
     *
     * @param bytes in [0, 1 GiB]; 0 sends every message by rendezvous.
     * @return this.
     */
    public CommConfigBuilder eagerBudget(final int bytes)
    {
        return set(EAGER_BUDGET, bytes);
    }

    /**
     * The algorithm override ({@link CommConfig#ALGO}).
     *
     * @param algo the override.
     * @return this.
     */
    public CommConfigBuilder algo(final String algo)
    {
        return set(ALGO, algo);
    }

    /**
     * Whether results must be bitwise reproducible.
     *
     * @param deterministic true for reproducible results.
     * @return this.
     */
    public CommConfigBuilder deterministic(final boolean deterministic)
    {
        return set(DETERMINISTIC, deterministic);
    }

    /**
     * Whether links are measured at creation.
     *
     * @param topoProbe the setting.
     * @return this.
     */
    public CommConfigBuilder topoProbe(final TopoProbe topoProbe)
    {
        return set(TOPO_PROBE, topoProbe);
    }

    /**
     * The interface selector ({@link CommConfig#SOCKET_IFNAME}).
     *
     * @param socketIfname the selector.
     * @return this.
     */
    public CommConfigBuilder socketIfname(final String socketIfname)
    {
        return set(SOCKET_IFNAME, socketIfname);
    }

    /**
     * The address to listen on and advertise ({@link CommConfig#IF_IP}).
     *
     * @param ifIp an address of an interface that is up.
     * @return this.
     */
    public CommConfigBuilder ifIp(final String ifIp)
    {
        return set(IF_IP, ifIp);
    }

    /**
     * The job token.
     *
     * @param jobToken the secret.
     * @return this.
     */
    public CommConfigBuilder jobToken(final String jobToken)
    {
        return set(JOB_TOKEN, jobToken);
    }

    /**
     * The node identity override.
     *
     * @param nodeId any string that ranks on the same node share.
     * @return this.
     */
    public CommConfigBuilder nodeId(final String nodeId)
    {
        return set(NODE_ID, nodeId);
    }

    /**
     * Resolves the library's settings (builder, then environment, then default) and validates the whole; a
     * transport's settings resolve the same way when it asks for them.
     *
     * @return the configuration.
     * @throws IllegalArgumentException naming the setting when a value is invalid.
     * @throws HcclException            {@link ErrorCode#E_ENV} when a launcher's pair of variables is half set
     *                                  ({@code RANK} without {@code WORLD_SIZE}, say), naming the one missing.
     */
    public CommConfig conclude()
    {
        return CommConfig.conclude(env, explicit);
    }
}
