package dev.hccl.tools.launch;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What one {@code hcclrun} invocation asked for, already validated.
 *
 * @param command     the program and its arguments, started once per rank without a shell
 * @param ranks       how many local ranks to start (&gt;= 1)
 * @param masterAddr  the rendezvous address handed to every rank as {@code MASTER_ADDR}
 * @param masterPort  the rendezvous port, or {@code null} to pick a free one
 * @param gracePeriod how long a rank may take to exit after SIGTERM before it is killed
 * @param prefix      whether forwarded output lines get a {@code [rank] } prefix
 */
record LaunchPlan(List<String> command, int ranks, String masterAddr, Integer masterPort,
                  Duration gracePeriod, boolean prefix)
{
    LaunchPlan
    {
        command = List.copyOf(command);
        Objects.requireNonNull(masterAddr, "masterAddr");
        Objects.requireNonNull(gracePeriod, "gracePeriod");
        if (command.isEmpty())
        {
            throw new IllegalArgumentException("command is empty");
        }
        if (ranks < 1)
        {
            throw new IllegalArgumentException("ranks < 1: " + ranks);
        }
    }
}
