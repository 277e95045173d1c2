import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordingFile;

/**
 * The operation path's walks, measured: which of our classes an all-reduce runs from the user's call to its
 * algorithm, and which a peer's failure runs from the transport's report to the user's exception. tools/op-walk.sh
 * runs {@code scenario} under JFR's method tracing (JDK 25+) of every class of hccl-core, hccl-algorithms, hccl-api
 * and the transports, then {@code report} over the recording.
 * <p>
 * The scenario: two ranks as threads, three all-reduces of 4 KiB, two barriers, then one more all-reduce ({@code ok});
 * or ({@code fail}) rank 1 aborts 300 ms after rank 0 entered it, so rank 0 fails with rank 1 named.
 * <p>
 * The report counts classes in the order first run (a nested class counts as its outer class) and method calls. The
 * all-reduce walk ends where the algorithm's {@code allReduce} begins. The failure walk is the dispatcher's
 * {@code onAbort} on the thread the transport delivers it on, without the notices the failing rank sends on to its
 * peers (the links' {@code abort}, whose delivery is the peers' walk), and the waiting rank's calls from the moment it
 * wakes. "The path alone" leaves out what the operation listener's subscribers ({@code dev.hccl.core.watch}) run. A
 * method left by an exception is not traced by JFR, so the failed call's own frames do not show.
 */
public final class OpWalk
{
    private OpWalk()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length == 2 && args[0].equals("scenario"))
        {
            scenario(args[1].equals("fail"));
        }
        else if (args.length == 3 && args[0].equals("report"))
        {
            report(Path.of(args[1]), args[2].equals("fail"));
        }
        else
        {
            System.err.println("usage: OpWalk scenario ok|fail  |  OpWalk report RECORDING.jfr ok|fail");
            System.exit(2);
        }
    }

    private static void scenario(final boolean fail) throws Exception
    {
        final int n = 2;
        final List<Communicator> comms = Hccl.initAll(n);
        final ExecutorService pool = Executors.newFixedThreadPool(n);
        final List<Future<?>> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++)
        {
            final Communicator c = comms.get(r);
            final int rank = r;
            ranks.add(pool.submit(() ->
            {
                final ByteBuffer send = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
                final ByteBuffer recv = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
                for (int i = 0; i < 3; i++)
                {
                    c.allReduce(send, recv, 1024, DataType.FP32, ReduceOp.SUM);
                }
                c.barrier();
                c.barrier();
                if (fail && rank == 1)
                {
                    Thread.sleep(300);
                    c.abort();
                    return null;
                }
                try
                {
                    c.allReduce(send, recv, 1024, DataType.FP32, ReduceOp.SUM);
                }
                catch (final HcclException ex)
                {
                    System.out.println("rank " + rank + " failed as it should: " + ex.getMessage());
                }
                return null;
            }));
        }
        try
        {
            for (final Future<?> f : ranks)
            {
                f.get();
            }
        }
        finally
        {
            pool.shutdown();
            for (final Communicator c : comms)
            {
                try
                {
                    c.close();
                }
                catch (final HcclException ex)
                {
                    // an aborted communicator reports its failure on close too
                }
            }
        }
    }

    /** One traced call: when it began and ended, on which thread, which class and method. */
    private record Call(long start, long end, long thread, String type, String method)
    {
        boolean of(final String typeSuffix, final String name)
        {
            return type.endsWith(typeSuffix) && method.equals(name);
        }

        boolean within(final Call outer)
        {
            return thread == outer.thread && start >= outer.start && start <= outer.end;
        }
    }

    private static void report(final Path recording, final boolean fail) throws Exception
    {
        final List<Call> calls = new ArrayList<>();
        for (final RecordedEvent e : RecordingFile.readAllEvents(recording))
        {
            if (e.getEventType().getName().equals("jdk.MethodTrace"))
            {
                final RecordedMethod m = e.getValue("method");
                calls.add(new Call(nanos(e.getStartTime()), nanos(e.getEndTime()), e.getThread().getJavaThreadId(),
                    m.getType().getName(), m.getName()));
            }
        }
        calls.sort(Comparator.comparingLong(Call::start).thenComparing(Comparator.comparingLong(Call::end).reversed()));
        if (!fail)
        {
            final List<Call> allReduces = calls.stream().filter(c -> c.of(".CommunicatorCalls", "allReduce")).toList();
            for (final Call call : allReduces.subList(Math.max(0, allReduces.size() - 2), allReduces.size()))
            {
                final List<Call> walk = new ArrayList<>();
                for (final Call c : calls)
                {
                    if (c.within(call))
                    {
                        if (c.type().endsWith("Algorithm") && c.method().equals("allReduce"))
                        {
                            break;
                        }
                        walk.add(c);
                    }
                }
                print("all-reduce, from the user's call to the algorithm (thread " + call.thread() + ")", walk);
            }
            return;
        }
        final Call abort = last(calls, c -> c.of(".CommunicatorImpl", "abort"));
        final Call delivery = calls.stream().filter(c -> c.start() > abort.start() && c.of(".Dispatcher", "onAbort"))
            .findFirst().orElseThrow(() -> new IllegalStateException("no Dispatcher.onAbort after the abort"));
        final List<Call> delivered = new ArrayList<>();
        long relayEnds = -1;
        for (final Call c : calls)
        {
            if (c.within(delivery) && c.start() > relayEnds)
            {
                delivered.add(c);
                if (c.method().equals("abort") && c.type().contains("Link"))
                {
                    relayEnds = c.end(); // the notice to the peers: their walk, not this one
                }
            }
        }
        // The waiting rank: the thread other than the aborting one that ran the last all-reduce.
        final Call waiting = last(calls, c -> c.of(".CommunicatorCalls", "allReduce") && c.thread() != abort.thread());
        final List<Call> woken = calls.stream()
            .filter(c -> c.thread() == waiting.thread() && c.start() > delivery.start()).toList();
        print("failure, delivered (thread " + delivery.thread() + ")", delivered);
        print("failure, the waiting rank woken (thread " + waiting.thread() + ")", woken);
        final List<Call> both = new ArrayList<>(delivered);
        both.addAll(woken);
        print("failure, both", both);
    }

    private static Call last(final List<Call> calls, final Predicate<Call> which)
    {
        Call found = null;
        for (final Call c : calls)
        {
            if (which.test(c))
            {
                found = c;
            }
        }
        if (null == found)
        {
            throw new IllegalStateException("the recording lacks the call looked for: was the scenario traced?");
        }
        return found;
    }

    private static void print(final String walk, final List<Call> calls)
    {
        printOne(walk, calls);
        // The listener's subscribers run what they run; the path only calls the listener.
        final List<Call> path = new ArrayList<>();
        Call subscriber = null;
        for (final Call c : calls)
        {
            if (null != subscriber && c.within(subscriber))
            {
                continue;
            }
            if (c.type().startsWith("dev.hccl.core.watch."))
            {
                subscriber = c;
                continue;
            }
            path.add(c);
        }
        printOne(walk + ", the path alone", path);
    }

    private static void printOne(final String walk, final List<Call> calls)
    {
        final Set<String> classes = new LinkedHashSet<>();
        for (final Call c : calls)
        {
            final String type = c.type().substring("dev.hccl.".length());
            final int nested = type.indexOf('$');
            classes.add(nested < 0 ? type : type.substring(0, nested));
        }
        System.out.printf("%s: %d classes, %d calls%n    %s%n", walk, classes.size(), calls.size(),
            String.join(" > ", classes));
    }

    private static long nanos(final Instant t)
    {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }
}
