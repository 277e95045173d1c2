package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ServiceConfigurationError;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Plug-ins found through {@code META-INF/services}: one that registers adds its algorithm, one that clashes is named
 * in the error, one that cannot be loaded is refused.
 */
class AlgorithmPluginLoadingTest
{
    /** Registers a second all-reduce named "ring". */
    public static final class ClashingPlugin implements AlgorithmPlugin
    {
        @Override
        public void register(final AlgorithmCatalog catalog)
        {
            catalog.register("Ring", new FullMeshAlgorithm(), AutoLimits.NONE);
        }
    }

    /** Registers the one-shot exchange under a name of its own. */
    public static final class RenamingPlugin implements AlgorithmPlugin
    {
        @Override
        public void register(final AlgorithmCatalog catalog)
        {
            catalog.register("oneshot", new FullMeshAlgorithm(), new AutoLimits(64, 2));
        }
    }

    private static ClassLoader listing(final Path dir, final String... plugins) throws IOException
    {
        final Path services = Files.createDirectories(dir.resolve("META-INF/services"));
        Files.writeString(services.resolve(AlgorithmPlugin.class.getName()), String.join("\n", plugins) + "\n");
        return new URLClassLoader(new URL[] {dir.toUri().toURL()}, AlgorithmPluginLoadingTest.class.getClassLoader());
    }

    @Test
    void aPluginAddsItsAlgorithmWithItsLimits(@TempDir final Path dir) throws IOException
    {
        final AlgorithmCatalog catalog = AlgorithmCatalog.installed(listing(dir, RenamingPlugin.class.getName()));
        assertNotNull(catalog.find(Operation.ALL_REDUCE, "OneShot", FullMeshAlgorithm.class));
        assertEquals(new AutoLimits(64, 2), catalog.autoLimits(Operation.ALL_REDUCE, "oneshot"));
        assertThrows(IllegalStateException.class, () -> catalog.register("late", new RingAlgorithm(), AutoLimits.NONE));
    }

    @Test
    void aClashNamesThePlugin(@TempDir final Path dir) throws IOException
    {
        final IllegalStateException ex = assertThrows(IllegalStateException.class,
            () -> AlgorithmCatalog.installed(listing(dir, ClashingPlugin.class.getName())));
        assertTrue(ex.getMessage().contains(ClashingPlugin.class.getName()), ex.getMessage());
        assertTrue(ex.getMessage().contains("two algorithms named Ring for allReduce"), ex.getMessage());
    }

    @Test
    void aPluginThatCannotBeLoadedIsRefused(@TempDir final Path dir) throws IOException
    {
        assertThrows(ServiceConfigurationError.class,
            () -> AlgorithmCatalog.installed(listing(dir, "dev.hccl.algorithms.NoSuchPlugin")));
    }
}
