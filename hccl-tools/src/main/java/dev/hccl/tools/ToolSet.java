package dev.hccl.tools;

import java.util.List;

/**
 * The tools a module contributes to the tools jar, found with {@link java.util.ServiceLoader} (a
 * {@code META-INF/services/dev.hccl.tools.ToolSet} entry): the jar's entry point (hccl-dist's ToolsJar) need not know
 * the modules shaded into it.
 */
public interface ToolSet
{
    /**
     * @return the module's tools, in the order the jar's usage lists them.
     */
    List<Tool> tools();
}
