package dev.hccl.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVPrinter;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes a report as {@code --json} (Jackson) and {@code --csv} (Commons CSV).
 */
public final class ReportFiles
{
    /** The CSV columns: one row per table row, out-of-place columns first, as in the table. */
    public static final List<String> CSV_HEADER = List.of(
        "algo", "operation", "size_bytes", "count", "type", "redop", "root",
        "oop_time_us", "oop_algbw_gbps", "oop_busbw_gbps", "oop_wrong",
        "ip_time_us", "ip_algbw_gbps", "ip_busbw_gbps", "ip_wrong", "oop_operations", "ip_operations");

    private ReportFiles()
    {
    }

    /**
     * Writes the whole report as one JSON document.
     *
     * @param file   the file, replaced if it exists; missing parent directories are created.
     * @param report the report.
     * @throws IOException when the file cannot be written.
     */
    public static void writeJson(final Path file, final BenchReport report) throws IOException
    {
        createParent(file);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), report);
    }

    /**
     * Writes every row of every sweep, with a header record; a column whose results were not checked is empty.
     *
     * @param file   the file, replaced if it exists; missing parent directories are created.
     * @param report the report.
     * @throws IOException when the file cannot be written.
     */
    public static void writeCsv(final Path file, final BenchReport report) throws IOException
    {
        createParent(file);
        final CSVFormat format = CSVFormat.DEFAULT.builder().setHeader(CSV_HEADER.toArray(String[]::new)).get();
        try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
             CSVPrinter csv = new CSVPrinter(writer, format))
        {
            for (final Sweep sweep : report.runs())
            {
                for (final BenchRow row : sweep.rows())
                {
                    final Measurement o = row.outOfPlace();
                    final Measurement i = row.inPlace();
                    csv.printRecord(row.algo(), report.operation(), row.size(), row.count(), row.type(), row.redop(),
                        row.root(), o.timeUs(), o.algBw(), o.busBw(), o.wrong() == null ? "" : o.wrong(),
                        i.timeUs(), i.algBw(), i.busBw(), i.wrong() == null ? "" : i.wrong(), o.operations(),
                        i.operations());
                }
            }
        }
    }

    static void createParent(final Path file) throws IOException
    {
        final Path parent = file.toAbsolutePath().getParent();
        if (parent != null)
        {
            Files.createDirectories(parent);
        }
    }
}
