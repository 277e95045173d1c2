package dev.hccl.api.testing;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

/**
 * Test support: turns some classes' loggers off for a while. The fuzzers provoke a protocol error in most of their
 * cases, and the code under test logs each one at WARN, as it should; a million of them would only bury the output.
 * slf4j-simple, the binding of the tests, sets a logger's level once, so this reaches its level field; under any
 * other binding it changes nothing.
 */
public final class QuietLogs implements AutoCloseable
{
    private static final String SIMPLE_LOGGER = "org.slf4j.simple.SimpleLogger";

    private final List<Runnable> restores = new ArrayList<>();

    private QuietLogs()
    {
    }

    /**
     * Silences the loggers of some classes until {@link #close()}.
     *
     * @param classes whose loggers.
     * @return what restores them.
     */
    public static QuietLogs silence(final Class<?>... classes)
    {
        final QuietLogs quiet = new QuietLogs();
        for (final Class<?> c : classes)
        {
            final Logger logger = LoggerFactory.getLogger(c);
            if (!SIMPLE_LOGGER.equals(logger.getClass().getName()))
            {
                continue;
            }
            try
            {
                final Field level = logger.getClass().getDeclaredField("currentLogLevel");
                final Field off = logger.getClass().getDeclaredField("LOG_LEVEL_OFF");
                level.setAccessible(true);
                off.setAccessible(true);
                final int before = level.getInt(logger);
                level.setInt(logger, off.getInt(null));
                quiet.restores.add(() -> set(level, logger, before));
            }
            catch (final ReflectiveOperationException | RuntimeException ex)
            {
                // Another version of the binding: the logs stay as they are.
            }
        }
        return quiet;
    }

    @Override
    public void close()
    {
        restores.forEach(Runnable::run);
        restores.clear();
    }

    private static void set(final Field level, final Logger logger, final int value)
    {
        try
        {
            level.setInt(logger, value);
        }
        catch (final IllegalAccessException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
