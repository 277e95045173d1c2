package dev.hccl.core.op;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Operation;
import dev.hccl.api.Setting;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * {@code HCCL_ALGO}, parsed: which algorithm the user forces for each operation, per level (level0 within a node,
 * level1 across nodes), in HCCL's grammar and a shorter one:
 * <ul>
 *     <li>{@code ring}: that algorithm for every operation it implements, the automatic choice for the rest;</li>
 *     <li>{@code level0:NA;level1:ring}: per level, for every operation (as the bare name does);</li>
 *     <li>{@code allreduce=level0:NA;level1:H-D_R/allgather=ring}: per operation, each as one of the two forms
 *     above; an operation not named keeps the automatic choice.</li>
 * </ul>
 * {@code NA} (or an empty value) asks for the automatic choice. On a single node level0 decides, across nodes
 * level1 does: a bare name over all ranks, the level form composed with the hierarchy where the operation has it
 * ({@link #levelForm}; {@code AlgorithmSelector} builds the composition). Names and operation names match whatever their case; operation names may have underscores
 * ({@code all_reduce}). A name no operation knows, or one that the operation it is given for does not implement,
 * is refused with the list of valid names.
 */
public final class AlgoOverride
{
    /** The automatic choice for every operation. */
    static final AlgoOverride AUTOMATIC = new AlgoOverride(null, new EnumMap<>(Operation.class));

    /**
     * {@link CommConfig#ALGO} read as an override against the installed algorithms: parsed once per configuration
     * ({@code config.get(AlgoOverride.SETTING)}), however many communicators and splits read it.
     */
    public static final Setting<AlgoOverride> SETTING =
        CommConfig.ALGO.readAs(spec -> parse(spec, InstalledAlgorithms.catalog()));

    private final Levels everyOperation;
    private final Map<Operation, Levels> perOperation;

    private AlgoOverride(final Levels everyOperation, final Map<Operation, Levels> perOperation)
    {
        this.everyOperation = everyOperation;
        this.perOperation = perOperation;
    }

    /** The forced names of one scope: null for automatic; {@code levelForm} when given as level0/level1. */
    private record Levels(String level0, String level1, boolean levelForm)
    {
        String at(final boolean multiNode)
        {
            return multiNode ? level1 : level0;
        }

        /** Whether neither level forces anything. */
        boolean automatic()
        {
            return level0 == null && level1 == null;
        }

        /** A bare name, or {@code level0:X;level1:Y}, with the catalog's spelling and NA for automatic. */
        String canonical()
        {
            return levelForm ? "level0:" + show(level0) + ";level1:" + show(level1) : show(level0);
        }
    }

    /**
     * Parses and checks an override against the algorithms there are.
     *
     * @param spec    the value of {@code HCCL_ALGO} or {@code CommConfig.algo}; null or blank for automatic.
     * @param catalog the algorithms.
     * @return the override.
     * @throws IllegalArgumentException naming {@code HCCL_ALGO}, what is wrong and the valid names.
     */
    static AlgoOverride parse(final String spec, final AlgorithmCatalog catalog)
    {
        if (spec == null || spec.isBlank())
        {
            return AUTOMATIC;
        }
        final String text = spec.trim();
        if (!text.contains("="))
        {
            return of(levels(text, null, catalog, spec), new EnumMap<>(Operation.class));
        }
        final Map<Operation, Levels> perOp = new EnumMap<>(Operation.class);
        for (final String part : text.split("/"))
        {
            final int eq = part.indexOf('=');
            if (eq < 0)
            {
                throw bad(spec, "'" + part.trim() + "' is not OPERATION=ALGORITHMS; operations are " + operations(catalog));
            }
            final Operation op = operation(part.substring(0, eq).trim(), catalog, spec);
            if (perOp.put(op, levels(part.substring(eq + 1).trim(), op, catalog, spec)) != null)
            {
                throw bad(spec, op.displayName() + " is given twice");
            }
        }
        return of(null, perOp);
    }

    /**
     * An override with every scope that forces nothing left out, so that texts meaning the same ({@code NA},
     * {@code level0:NA;level1:NA}, {@code allreduce=NA}, nothing) give equal overrides.
     */
    private static AlgoOverride of(final Levels everyOperation, final Map<Operation, Levels> perOperation)
    {
        perOperation.values().removeIf(Levels::automatic);
        final Levels every = everyOperation == null || everyOperation.automatic() ? null : everyOperation;
        return every == null && perOperation.isEmpty() ? AUTOMATIC : new AlgoOverride(every, perOperation);
    }

    /**
     * The algorithm forced for an operation.
     *
     * @param op        the operation.
     * @param multiNode whether the communicator spans more than one node (level1 decides) or not (level0).
     * @param catalog   the algorithms, to skip a family name that lacks this operation.
     * @return the name, or null for the automatic choice.
     */
    String forced(final Operation op, final boolean multiNode, final AlgorithmCatalog catalog)
    {
        final Levels own = perOperation.get(op);
        if (own != null)
        {
            return own.at(multiNode);
        }
        if (everyOperation == null)
        {
            return null;
        }
        final String name = everyOperation.at(multiNode);
        // A name for every operation applies to the operations it implements; the rest stay automatic.
        return name != null && catalog.namesFor(op).stream().anyMatch(n -> n.equalsIgnoreCase(name)) ? name : null;
    }

    /**
     * Whether the name forced for an operation was given per level ({@code level0:X;level1:Y}) rather than bare: across
     * nodes HCCL then composes the levels, level0 within each node and level1 between nodes.
     *
     * @param op the operation.
     * @return true for the level form.
     */
    boolean levelForm(final Operation op)
    {
        final Levels own = perOperation.get(op);
        return own != null ? own.levelForm() : everyOperation != null && everyOperation.levelForm();
    }

    /**
     * The override in a canonical spelling of HCCL's grammar, the same for every text that means the same (whatever the
     * case, the blanks, the underscores in operation names, the order of operations, {@code NA} or nothing): what the
     * ranks compare at the rendezvous, as they must force alike. Parsing it gives an equal override.
     *
     * @return such as {@code ring}, {@code level0:NA;level1:ring} or {@code allreduce=ring/allgather=NA}; empty for
     *         the automatic choice.
     */
    public String canonical()
    {
        if (everyOperation != null)
        {
            return everyOperation.canonical();
        }
        final StringBuilder sb = new StringBuilder();
        perOperation.forEach((op, levels) -> sb.append(sb.length() > 0 ? "/" : "")
            .append(op.displayName().toLowerCase(Locale.ROOT)).append('=').append(levels.canonical()));
        return sb.toString();
    }

    @Override
    public boolean equals(final Object other)
    {
        return other instanceof AlgoOverride o && Objects.equals(everyOperation, o.everyOperation) &&
            perOperation.equals(o.perOperation);
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(everyOperation, perOperation);
    }

    @Override
    public String toString()
    {
        if (everyOperation == null && perOperation.isEmpty())
        {
            return "automatic";
        }
        final StringBuilder sb = new StringBuilder();
        if (everyOperation != null)
        {
            sb.append("every operation: level0 ").append(show(everyOperation.level0()))
                .append(", level1 ").append(show(everyOperation.level1()));
        }
        perOperation.forEach((op, levels) -> sb.append(sb.length() > 0 ? "; " : "").append(op.displayName())
            .append(": level0 ").append(show(levels.level0())).append(", level1 ").append(show(levels.level1())));
        return sb.toString();
    }

    private static String show(final String name)
    {
        return name == null ? AlgorithmCatalog.AUTOMATIC : name;
    }

    /** A bare name, or {@code level0:X;level1:Y}, for one operation or (op null) for all. */
    private static Levels levels(
        final String text, final Operation op, final AlgorithmCatalog catalog, final String spec)
    {
        if (!text.contains(":"))
        {
            final String name = name(text, op, catalog, spec);
            return new Levels(name, name, false);
        }
        String level0 = null;
        String level1 = null;
        boolean seen0 = false;
        boolean seen1 = false;
        for (final String item : text.split(";"))
        {
            if (item.isBlank())
            {
                continue;
            }
            final int colon = item.indexOf(':');
            final String level = colon < 0 ? item.trim() : item.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            if (colon < 0 || !(level.equals("level0") || level.equals("level1")))
            {
                throw bad(spec, "'" + item.trim() + "' is not level0:NAME or level1:NAME");
            }
            final String name = name(item.substring(colon + 1).trim(), op, catalog, spec);
            if (level.equals("level0"))
            {
                if (seen0)
                {
                    throw bad(spec, "level0 is given twice");
                }
                seen0 = true;
                level0 = name;
            }
            else
            {
                if (seen1)
                {
                    throw bad(spec, "level1 is given twice");
                }
                seen1 = true;
                level1 = name;
            }
        }
        return new Levels(level0, level1, true);
    }

    /** A checked algorithm name in its catalog spelling, or null for NA / empty. */
    private static String name(final String text, final Operation op, final AlgorithmCatalog catalog, final String spec)
    {
        if (text.isEmpty() || text.equalsIgnoreCase(AlgorithmCatalog.AUTOMATIC))
        {
            return null;
        }
        if (op == null)
        {
            if (!catalog.knows(text))
            {
                throw bad(spec, "unknown algorithm '" + text + "'; valid: " + String.join(", ", catalog.names()) +
                    ", " + AlgorithmCatalog.AUTOMATIC + " (automatic)");
            }
            return catalog.names().stream().filter(n -> n.equalsIgnoreCase(text)).findFirst().orElse(text);
        }
        for (final String n : catalog.namesFor(op))
        {
            if (n.equalsIgnoreCase(text))
            {
                return n;
            }
        }
        throw bad(spec, (catalog.knows(text) ? "'" + text + "' does not implement " : "unknown algorithm '" + text +
            "' for ") + op.displayName().toLowerCase(Locale.ROOT) + "; valid: " +
            String.join(", ", catalog.namesFor(op)) + ", " + AlgorithmCatalog.AUTOMATIC + " (automatic)");
    }

    private static Operation operation(final String text, final AlgorithmCatalog catalog, final String spec)
    {
        final String key = text.replace("_", "").toLowerCase(Locale.ROOT);
        for (final Operation op : Operation.values())
        {
            if (!catalog.namesFor(op).isEmpty() && op.displayName().toLowerCase(Locale.ROOT).equals(key))
            {
                return op;
            }
        }
        throw bad(spec, "unknown operation '" + text + "'; operations are " + operations(catalog));
    }

    private static String operations(final AlgorithmCatalog catalog)
    {
        final StringBuilder sb = new StringBuilder();
        for (final Operation op : Operation.values())
        {
            if (!catalog.namesFor(op).isEmpty())
            {
                sb.append(sb.length() > 0 ? ", " : "").append(op.displayName().toLowerCase(Locale.ROOT));
            }
        }
        return sb.toString();
    }

    private static IllegalArgumentException bad(final String spec, final String why)
    {
        return new IllegalArgumentException("HCCL_ALGO '" + spec + "': " + why);
    }
}
