package dev.hccl.tools;

import java.util.function.Consumer;

/**
 * A tool of the tools jar ({@code java -jar hccl-tools.jar NAME ARGS...}).
 *
 * @param name    its name in the jar, in lower case, such as {@code bench}.
 * @param script  its script's name in the repository's {@code bin/}, such as {@code hccl-bench}; a rank's command
 *                may name it instead.
 * @param summary what it does, in one line.
 * @param main    its main, given the arguments after the name.
 */
public record Tool(String name, String script, String summary, Consumer<String[]> main)
{
}
