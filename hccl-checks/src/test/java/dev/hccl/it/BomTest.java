package dev.hccl.it;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code hccl-bom} lists every library module of the build (all but the BOM itself, the programs and the checks), each at the
 * project's version, so that a user who imports it gets one release of everything.
 */
class BomTest
{
    /** The BOM, the programs (tools, benchmarks, examples, the tools jar) and the checks. */
    private static final Set<String> NOT_LIBRARIES = Set.of("hccl-bom", "hccl-tools", "hccl-bench", "hccl-examples",
        "hccl-dist", "hccl-checks");

    @Test
    void theBomListsEveryLibraryModuleAtTheProjectsVersion() throws Exception
    {
        final Document root = parse(Path.of("..", "pom.xml"));
        final String version = child(root.getDocumentElement(), "version");
        final Set<String> libraries = new TreeSet<>();
        final NodeList modules = root.getElementsByTagName("module");
        for (int i = 0; i < modules.getLength(); i++)
        {
            libraries.add(modules.item(i).getTextContent().trim());
        }
        libraries.removeAll(NOT_LIBRARIES);

        final Document bom = parse(Path.of("..", "hccl-bom", "pom.xml"));
        assertEquals(version, child(bom.getDocumentElement(), "version"), "the BOM's own version");
        final Set<String> listed = new TreeSet<>();
        final List<String> versions = new ArrayList<>();
        final NodeList dependencies = bom.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++)
        {
            final Element dependency = (Element)dependencies.item(i);
            assertEquals("dev.hccl", child(dependency, "groupId"));
            listed.add(child(dependency, "artifactId"));
            versions.add(child(dependency, "version"));
        }
        assertEquals(libraries, listed, "the BOM must list exactly the library modules");
        versions.forEach(v -> assertEquals(version, v, "every module at the project's version"));
    }

    private static Document parse(final Path pom) throws Exception
    {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
    }

    /** The text of an element's direct child of that name. */
    private static String child(final Element parent, final String name)
    {
        for (int i = 0; i < parent.getChildNodes().getLength(); i++)
        {
            if (parent.getChildNodes().item(i) instanceof Element e && e.getTagName().equals(name))
            {
                return e.getTextContent().trim();
            }
        }
        throw new AssertionError(parent.getTagName() + " has no " + name);
    }
}
