package dev.hccl.core.events;

import jdk.jfr.FlightRecorder;

/**
 * Whether the JDK's flight recorder has started in this JVM, which it does when a recording starts (from the command
 * line, by {@code jcmd}, or through the API): before, no recording can take an event, so none is made. The event
 * classes then stay unloaded: loading the first one sets up the recorder's metadata and generates its handler, a
 * part of a job's init that shows (docs/PERFORMANCE.md), and more work for the JIT. Once started, each event class's
 * {@code isEnabled} says whether a recording takes it; a class loaded after a recording started is instrumented as it
 * loads, so a recording started during a job gets the events from then on.
 */
public final class Recordings
{
    private Recordings()
    {
    }

    /**
     * @return whether the flight recorder has started in this JVM (a read of a flag).
     */
    public static boolean started()
    {
        return FlightRecorder.isInitialized();
    }
}
