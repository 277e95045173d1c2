package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Setting;
import dev.hccl.api.TopoProbe;
import dev.hccl.api.spi.TransportProvider;
import dev.hccl.training.Autotune;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The configuration guide's table (docs/guide/configuration.md) and the settings the code defines (the library's, every transport's found as a
 * plug-in, and the training helpers') name the same variables, and each {@code HCCL_*} row gives the default the code uses.
 */
class ConfigurationTableTest
{
    private static final Pattern VARIABLE = Pattern.compile("`([A-Z][A-Z0-9_]+)`");

    @Test
    void theReadmeTableListsEverySettingWithItsDefault() throws IOException
    {
        final Map<String, String> rows = readmeRows();
        final Map<String, Setting<?>> settings = new LinkedHashMap<>();
        for (final Setting<?> s : CommConfig.SETTINGS)
        {
            settings.put(s.variable(), s);
        }
        for (final TransportProvider provider : ServiceLoader.load(TransportProvider.class))
        {
            for (final Setting<?> s : provider.settings())
            {
                settings.put(s.variable(), s);
            }
        }
        // the training helpers' own
        settings.put(Autotune.SETTING.variable(), Autotune.SETTING);
        assertTrue(settings.containsKey("HCCL_IO_THREADS") && settings.containsKey("HCCL_SHM_DIR"),
            "the transports' settings were not found: " + settings.keySet());
        assertEquals(new TreeSet<>(settings.keySet()), new TreeSet<>(rows.keySet()),
            "docs/guide/configuration.md's table and the settings differ");
        for (final Setting<?> s : settings.values())
        {
            if (s.variable().startsWith("HCCL_") && null != s.defaultValue())
            {
                final String expected = "`" + readmeForm(s.defaultValue()) + "`";
                assertTrue(rows.get(s.variable()).contains(expected),
                    s.variable() + ": docs/guide/configuration.md's default column should say " + expected + ", it says: " +
                    rows.get(s.variable()));
            }
        }
    }

    /** A default as the guide writes it: seconds for durations, 0/1 for switches. */
    private static String readmeForm(final Object value)
    {
        if (value instanceof Duration)
        {
            return Long.toString(((Duration)value).toSeconds());
        }
        if (value instanceof Boolean)
        {
            return (Boolean)value ? "1" : "0";
        }
        if (value == TopoProbe.OFF)
        {
            return "0";
        }
        return value.toString();
    }

    /** Each variable of the first column of the configuration guide's table, with its row's default column. */
    private static Map<String, String> readmeRows() throws IOException
    {
        final List<String> lines = Files.readAllLines(repository().resolve("docs/guide/configuration.md"));
        final int start = lines.indexOf("# Configuration");
        assertTrue(start >= 0, "docs/guide/configuration.md has no Configuration title");
        final Map<String, String> rows = new LinkedHashMap<>();
        for (final String line : lines.subList(start + 1, lines.size()))
        {
            if (line.startsWith("#"))
            {
                break;
            }
            if (!line.startsWith("| `"))
            {
                continue;
            }
            final List<String> cells = new ArrayList<>(List.of(line.split(" \\| ")));
            final Matcher m = VARIABLE.matcher(cells.get(0));
            while (m.find())
            {
                final String previous = rows.put(m.group(1), cells.get(cells.size() - 1));
                assertEquals(null, previous, m.group(1) + " has two rows");
            }
        }
        return rows;
    }

    private static Path repository()
    {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent())
        {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("hccl-api")))
            {
                return dir;
            }
        }
        throw new AssertionError("README.md not found above " + Path.of("").toAbsolutePath());
    }
}
