package dev.hccl.spark;

import org.junit.jupiter.api.Test;

import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * hccl-shaded, as this module gets it, holds the library with its dependencies relocated: nothing of Netty, Agrona or
 * org.json under their own packages (they would clash with the host's, Spark's Netty 4.1 here), Netty's native
 * libraries renamed as its relocated loader looks for them, and the relocated epoll transport loads beside Spark's.
 */
class ShadedJarTest
{
    private static Path shadedJar() throws Exception
    {
        final Path jar = Path.of(dev.hccl.core.HcclProvider.class.getProtectionDomain().getCodeSource().getLocation()
            .toURI());
        assertTrue(jar.getFileName().toString().startsWith("hccl-shaded"), "the library comes from " + jar);
        return jar;
    }

    @Test
    void onlyTheLibraryAndRelocatedDependenciesAreInside() throws Exception
    {
        final List<String> strays = new ArrayList<>();
        final List<String> natives = new ArrayList<>();
        try (JarFile jar = new JarFile(shadedJar().toFile()))
        {
            jar.stream().map(ZipEntry::getName).forEach(name ->
            {
                if (name.startsWith("META-INF/native/"))
                {
                    natives.add(name);
                }
                else if (name.endsWith(".class") && !name.startsWith("dev/hccl/"))
                {
                    strays.add(name);
                }
            });
        }
        assertEquals(List.of(), strays, "classes outside dev.hccl");
        assertTrue(natives.contains("META-INF/native/libdev_hccl_shaded_netty_transport_native_epoll_x86_64.so"),
            natives.toString());
        for (final String n : natives)
        {
            if (!n.endsWith("/"))
            {
                assertTrue(n.contains("dev_hccl_shaded_netty"), "a native library not renamed: " + n);
            }
        }
    }

    @Test
    void theRelocatedEpollLoadsBesideSparks() throws Exception
    {
        // Loads META-INF/native/libdev_hccl_shaded_netty_transport_native_epoll_x86_64.so, or says why not.
        final Class<?> epoll = Class.forName("dev.hccl.shaded.io.netty.channel.epoll.Epoll");
        final Throwable cause = (Throwable)epoll.getMethod("unavailabilityCause").invoke(null);
        if (System.getProperty("os.name").startsWith("Linux") && "amd64".equals(System.getProperty("os.arch")))
        {
            assertEquals(null, cause, "the relocated epoll did not load");
        }
        // Spark's own Netty is a different one, 4.1, in its own package.
        final String sparkNetty = io.netty.util.Version.identify().get("netty-common").artifactVersion();
        assertTrue(sparkNetty.startsWith("4.1."), sparkNetty);
        assertTrue(Files.exists(shadedJar()));
    }

    @Test
    void theDeployedPomDependsOnSlf4jAlone() throws Exception
    {
        // What install and deploy publish in place of hccl-shaded's pom: the bundled modules are gone from it.
        final Path pom = Path.of("..", "hccl-shaded", "dependency-reduced-pom.xml");
        final NodeList dependencies = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile())
            .getElementsByTagName("dependency");
        final List<String> artifacts = new ArrayList<>();
        for (int i = 0; i < dependencies.getLength(); i++)
        {
            final Element d = (Element)dependencies.item(i);
            if (!"test".equals(text(d, "scope")))
            {
                artifacts.add(text(d, "groupId") + ":" + text(d, "artifactId"));
            }
        }
        assertEquals(List.of("org.slf4j:slf4j-api"), artifacts, Files.readString(pom));
    }

    private static String text(final Element e, final String child)
    {
        final NodeList n = e.getElementsByTagName(child);
        return n.getLength() == 0 ? null : n.item(0).getTextContent().trim();
    }
}
