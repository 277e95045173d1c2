package dev.hccl.tools;

import dev.hccl.tools.status.HcclStatus;
import dev.hccl.tools.topo.HcclTopo;
import dev.hccl.tools.trace.HcclTrace;

import java.util.List;

/**
 * This module's tools in the tools jar: those an operator runs against a job. The launcher is the jar's own
 * ({@code run}): it starts the jar's other tools.
 */
public final class OperatorTools implements ToolSet
{
    @Override
    public List<Tool> tools()
    {
        return List.of(
            new Tool("topo", "hccl-topo", "the job's topology, transports and links", HcclTopo::main),
            new Tool("trace", "hccl-trace", "reads the flight recorder's dumps and says what went wrong",
                HcclTrace::main),
            new Tool("status", "hccl-status", "where every rank of a running job is, and which one is behind",
                HcclStatus::main));
    }
}
