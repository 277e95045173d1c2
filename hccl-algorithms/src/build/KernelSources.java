import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes the reduction kernels' sources from their templates, at build time (hccl-algorithms' generate-sources
 * phase runs {@code java src/build/KernelSources.java TEMPLATES OUT}). Java generics do not reach primitive types, and
 * a loop shared through a lambda would make one call site serve every type and operator, which the JIT cannot inline;
 * so each kernel is its own loop, and the loops are written once here and in the templates, not once per type.
 * <p>
 * A template is a Java source with three directives, each on a line of its own:
 * <ul>
 *   <li>{@code //@each-op} ... {@code //@end}: the lines in between, once per operator (SUM, PROD, MAX, MIN), with
 *       {@code ${op}} the operator's method name and {@code ${combine}} the instance's expression for it (of
 *       {@code a} and {@code b});</li>
 *   <li>{@code //@if KEY} ... [{@code //@else} ...] {@code //@end}: the first part when the instance defines
 *       {@code KEY}, else the second;</li>
 * </ul>
 * and {@code ${KEY}} anywhere stands for the instance's value of {@code KEY}. {@code ${LOAD:base, offset}} and
 * {@code ${STORE:base, offset, value}} apply the instance's element access ({@code LOAD} with {@code @} for the
 * address, {@code STORE} with {@code @} and {@code %} for the value). A template without instances below is copied
 * with only its operator blocks expanded, under its own name.
 */
public final class KernelSources
{
    private static final List<String> OPS = List.of("SUM", "PROD", "MAX", "MIN");
    private static final Pattern VAR = Pattern.compile("\\$\\{(LOAD|STORE):([^}$]*)}|\\$\\{([A-Za-z_.]+)}");

    /** The scalar kernels of one template, ScalarReducer: one loop shape for every type it serves. */
    private static final List<Map<String, String>> SCALAR = List.of(
        integer("Int16Reducer", "INT16", "short", "Short", 1, "(short)(%)",
            "arithmetic in {@code int}, truncated back to 16 bits, which wraps around\n" +
            " * exactly as two's complement C does.", "a >= b ? a : b", "a <= b ? a : b"),
        integer("Int32Reducer", "INT32", "int", "Int", 2, "%",
            "Java {@code int} arithmetic wraps around on overflow, as two's complement C does.",
            "Math.max(a, b)", "Math.min(a, b)"),
        integer("Int64Reducer", "INT64", "long", "Long", 3, "%",
            "Java {@code long} arithmetic wraps around on overflow, as two's complement C\n * does.",
            "Math.max(a, b)", "Math.min(a, b)"),
        floating("Fp32Reducer", "FP32", "float", "Float", 2, true),
        floating("Fp64Reducer", "FP64", "double", "Double", 3, false),
        half("Fp16Reducer", "FP16", "Fp16",
            "\n * <p>\n * {@code float} has more than twice binary16's precision plus two bits, so for sum and" +
            " product this double rounding\n * gives the same result as rounding the exact value once."),
        half("Bf16Reducer", "BF16", "Bf16", ""));

    /** The Vector API kernels of primitive lanes, VectorReducer. */
    private static final List<Map<String, String>> VECTOR = List.of(
        vector("Int16VectorReducer", "INT16", "Short", "shorts", 1,
            "lanewise 16-bit arithmetic wraps around exactly as\n * {@link Int16Reducer}'s truncation of" +
            " {@code int} arithmetic does (the low 16 bits of a sum or product depend only on\n * the low 16 bits of" +
            " the operands)."),
        vector("Int32VectorReducer", "INT32", "Int", "ints", 2,
            "lanewise {@code int} arithmetic wraps around on overflow, as\n * {@link Int32Reducer} and two's" +
            " complement C do."),
        vector("Fp32VectorReducer", "FP32", "Float", "floats", 2,
            "each lane does the same IEEE 754 operation as {@link Fp32Reducer} does\n * per element, so results are" +
            " bit-identical to it.\n * <p>\n * Lanewise max and min are specified as {@link Math#max(float, float)}" +
            " and {@link Math#min(float, float)}, which the\n * scalar kernel calls: a NaN operand gives NaN, and" +
            " {@code +0.0} is greater than {@code -0.0}."));

    private KernelSources()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final Path templates = Path.of(args[0]);
        final Path out = Path.of(args[1]);
        Files.createDirectories(out);
        write(out, Files.readString(templates.resolve("ScalarReducer.java.template")), SCALAR);
        write(out, Files.readString(templates.resolve("VectorReducer.java.template")), VECTOR);
        try (Stream<Path> files = Files.list(templates))
        {
            for (final Path t : (Iterable<Path>)files::iterator)
            {
                final String name = t.getFileName().toString();
                if (name.endsWith(".java.template") && !name.equals("ScalarReducer.java.template") &&
                    !name.equals("VectorReducer.java.template"))
                {
                    final Map<String, String> own = new LinkedHashMap<>();
                    own.put("CLASS", name.substring(0, name.length() - ".java.template".length()));
                    write(out, Files.readString(t), List.of(ownOps(Files.readString(t), own)));
                }
            }
        }
    }

    private static void write(final Path out, final String template, final List<Map<String, String>> instances)
        throws IOException
    {
        for (final Map<String, String> instance : instances)
        {
            final String text = expand(template, instance);
            final Path file = out.resolve(instance.get("CLASS") + ".java");
            // Unchanged sources keep their time stamps, so that the compiler does not rebuild them.
            if (!Files.exists(file) || !Files.readString(file).equals(text))
            {
                Files.writeString(file, text, StandardCharsets.UTF_8);
            }
        }
    }

    /** A template of one class names its operators' expressions itself: {@code //@combine SUM add}, etc. */
    private static Map<String, String> ownOps(final String template, final Map<String, String> instance)
    {
        for (final String line : template.split("\n", -1))
        {
            final String t = line.strip();
            if (t.startsWith("//@combine "))
            {
                final String[] parts = t.substring("//@combine ".length()).split(" ", 2);
                instance.put("combine." + parts[0], parts[1]);
            }
        }
        return instance;
    }

    static String expand(final String template, final Map<String, String> instance)
    {
        final StringBuilder out = new StringBuilder();
        final String[] lines = template.split("\n", -1);
        // Each open //@if: whether its current part is emitted.
        final Deque<boolean[]> conditions = new ArrayDeque<>();
        List<String> opBlock = null;
        for (int n = 0; n < lines.length; n++)
        {
            final String line = lines[n];
            final String t = line.strip();
            if (t.startsWith("//@combine "))
            {
                continue;
            }
            if (opBlock != null)
            {
                if (t.equals("//@end"))
                {
                    for (int k = 0; k < OPS.size(); k++)
                    {
                        final String op = OPS.get(k);
                        final Map<String, String> withOp = new LinkedHashMap<>(instance);
                        withOp.put("op", op.toLowerCase());
                        withOp.put("combine", need(instance, "combine." + op));
                        for (final String l : opBlock)
                        {
                            out.append(substitute(l, withOp)).append('\n');
                        }
                        if (k < OPS.size() - 1)
                        {
                            out.append('\n');
                        }
                    }
                    opBlock = null;
                }
                else
                {
                    opBlock.add(line);
                }
                continue;
            }
            if (t.equals("//@each-op"))
            {
                opBlock = new ArrayList<>();
                continue;
            }
            if (t.startsWith("//@if "))
            {
                final boolean outer = conditions.stream().allMatch(c -> c[0]);
                final String value = instance.get(t.substring("//@if ".length()).strip());
                conditions.push(new boolean[]{outer && value != null && !value.isEmpty(), outer});
                continue;
            }
            if (t.equals("//@else"))
            {
                final boolean[] c = conditions.peek();
                c[0] = c[1] && !c[0];
                continue;
            }
            if (t.equals("//@end"))
            {
                conditions.pop();
                continue;
            }
            if (conditions.stream().allMatch(c -> c[0]))
            {
                out.append(substitute(line, instance));
                if (n < lines.length - 1)
                {
                    out.append('\n');
                }
            }
        }
        if (opBlock != null || !conditions.isEmpty())
        {
            throw new IllegalStateException(instance.get("CLASS") + ": a directive is not closed by //@end");
        }
        return out.toString();
    }

    private static String substitute(final String line, final Map<String, String> instance)
    {
        String result = line;
        // Repeated, since an instance's value may use another (STORE's value is often ${combine}).
        for (int pass = 0; pass < 4 && result.contains("${"); pass++)
        {
            final Matcher m = VAR.matcher(result);
            final StringBuilder b = new StringBuilder();
            while (m.find())
            {
                final String replacement;
                if (m.group(1) != null)
                {
                    final String[] a = splitArgs(m.group(2));
                    replacement = m.group(1).equals("LOAD") ?
                        need(instance, "LOAD").replace("@", a[0] + ", " + a[1]) :
                        need(instance, "STORE").replace("@", a[0] + ", " + a[1]).replace("%", a[2]);
                }
                else
                {
                    replacement = need(instance, m.group(3));
                }
                m.appendReplacement(b, Matcher.quoteReplacement(replacement));
            }
            m.appendTail(b);
            result = b.toString();
        }
        return result;
    }

    /** The arguments of a LOAD or STORE, split at the commas outside parentheses. */
    private static String[] splitArgs(final String args)
    {
        final List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < args.length(); i++)
        {
            final char c = args.charAt(i);
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            if (c == ',' && depth == 0)
            {
                parts.add(args.substring(start, i).strip());
                start = i + 1;
            }
        }
        parts.add(args.substring(start).strip());
        return parts.toArray(new String[0]);
    }

    private static String need(final Map<String, String> instance, final String key)
    {
        final String v = instance.get(key);
        if (v == null)
        {
            throw new IllegalStateException(instance.get("CLASS") + ": the template uses ${" + key +
                "}, which it does not define");
        }
        return v;
    }

    private static Map<String, String> base(final String cls, final String type, final String t, final int shift,
        final String doc)
    {
        final Map<String, String> m = new LinkedHashMap<>();
        m.put("CLASS", cls);
        m.put("TYPE", type);
        m.put("T", t);
        m.put("SHIFT", Integer.toString(shift));
        m.put("DOC", doc);
        return m;
    }

    private static Map<String, String> integer(final String cls, final String type, final String t,
        final String access, final int shift, final String narrow, final String doc, final String max,
        final String min)
    {
        final Map<String, String> m = base(cls, type, t, shift, doc);
        m.put("LOAD", "UnsafeApi.get" + access + "(@)");
        m.put("STORE", "UnsafeApi.put" + access + "(@, " + narrow + ")");
        return operators(m, "a + b", "a * b", max, min);
    }

    private static Map<String, String> floating(final String cls, final String type, final String t,
        final String access, final int shift, final boolean narrowDivisor)
    {
        final Map<String, String> m = base(cls, type, t, shift, "Java {@code " + t + "} arithmetic (IEEE 754, round" +
            " to nearest even).\n * <p>\n * Max and min use {@link Math#max(" + t + ", " + t + ")} and {@link" +
            " Math#min(" + t + ", " + t + ")}: a NaN operand gives NaN, and\n * {@code +0.0} is greater than" +
            " {@code -0.0}.");
        m.put("LOAD", "UnsafeApi.get" + access + "(@)");
        m.put("STORE", "UnsafeApi.put" + access + "(@, %)");
        operators(m, "a + b", "a * b", "Math.max(a, b)", "Math.min(a, b)");
        m.put("DIVIDE", "yes");
        m.put("DIVIDE_DOC", "{@code x[i] = x[i] / divisor}, correctly rounded.");
        m.put("W", t);
        m.put("ONE", t.equals("float") ? "1.0f" : "1.0");
        if (narrowDivisor)
        {
            m.put("FLOAT_DIVISOR", "yes");
        }
        return m;
    }

    private static Map<String, String> half(final String cls, final String type, final String name,
        final String extraDoc)
    {
        final Map<String, String> m = base(cls, type, "float", 1, "both operands widen exactly to {@code float}," +
            " the operator runs in {@code float},\n * and the result rounds back to nearest even (overflowing to" +
            " infinity, NaN staying a quiet NaN)." + extraDoc);
        final String lower = name.toLowerCase();
        m.put("HALF", "yes");
        m.put("LOAD", "HalfFloats." + lower + "ToFloat(UnsafeApi.getShort(@))");
        m.put("STORE", "UnsafeApi.putShort(@, HalfFloats.floatTo" + name + "(%))");
        operators(m, "a + b", "a * b", "Math.max(a, b)", "Math.min(a, b)");
        m.put("DIVIDE", "yes");
        m.put("DIVIDE_DOC", "{@code x[i] = x[i] / divisor}: the quotient correctly rounded to {@code float}, then" +
            " rounded to nearest even.");
        m.put("W", "float");
        m.put("ONE", "1.0f");
        m.put("FLOAT_DIVISOR", "yes");
        return m;
    }

    private static Map<String, String> vector(final String cls, final String type, final String lane,
        final String loader, final int shift, final String doc)
    {
        final Map<String, String> m = base(cls, type, lane, shift, doc);
        m.put("VECTOR", lane + "Vector");
        m.put("BOXED", lane.equals("Int") ? "Integer" : lane);
        m.put("LOADER", loader);
        return operators(m, "a.add(b)", "a.mul(b)", "a.max(b)", "a.min(b)");
    }

    /** Each operator's expression of {@code a} and {@code b}. */
    private static Map<String, String> operators(final Map<String, String> m, final String sum, final String prod,
        final String max, final String min)
    {
        m.put("combine.SUM", sum);
        m.put("combine.PROD", prod);
        m.put("combine.MAX", max);
        m.put("combine.MIN", min);
        return m;
    }
}
