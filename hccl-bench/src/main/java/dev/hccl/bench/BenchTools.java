package dev.hccl.bench;

import dev.hccl.bench.check.SelfCheck;
import dev.hccl.bench.step.GradientStepBench;
import dev.hccl.tools.Tool;
import dev.hccl.tools.ToolSet;

import java.util.List;

/**
 * This module's tools in the tools jar: the collective benchmark, the training-step benchmark and the self-check.
 */
public final class BenchTools implements ToolSet
{
    @Override
    public List<Tool> tools()
    {
        return List.of(
            new Tool("bench", "hccl-bench", "nccl-tests for hccl-java: one collective over a sweep of sizes",
                HcclBench::main),
            new Tool("step-bench", "hccl-step-bench", "one training step's gradient synchronisation",
                GradientStepBench::main),
            new Tool("check", "SelfCheck", "every collective of this build against the reference", SelfCheck::main));
    }
}
