package io.turnstream.runtime;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One scrape of a {@code /metrics/prometheus} route, read as Prometheus would: samples by name and labels. */
public record PrometheusScrape(String contentType, String text) {

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)$");
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** GETs {@code baseUrl + /metrics/prometheus}; fails unless it answers 200. */
    public static PrometheusScrape of(String baseUrl) {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(baseUrl + ServiceMetrics.SCRAPE_PATH))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new AssertionError("scrape answered " + response.statusCode() + ": " + response.body());
            }
            return new PrometheusScrape(response.headers().firstValue("content-type").orElse(""), response.body());
        } catch (IOException e) {
            throw new AssertionError("cannot scrape " + baseUrl, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The sum of the samples of a metric whose labels include {@code labels}; 0 when there are none. */
    public double sum(String name, Map<String, String> labels) {
        double sum = 0;
        for (String line : text.split("\n")) {
            Matcher sample = SAMPLE.matcher(line);
            if (sample.matches() && sample.group(1).equals(name) && hasLabels(sample.group(3), labels)) {
                sum += Double.parseDouble(sample.group(4));
            }
        }
        return sum;
    }

    public double sum(String name) {
        return sum(name, Map.of());
    }

    /** Whether any sample of the metric is present. */
    public boolean has(String name) {
        return text.lines().anyMatch(line -> line.startsWith(name + "{") || line.startsWith(name + " "));
    }

    private static boolean hasLabels(String labelText, Map<String, String> labels) {
        String present = labelText == null ? "" : labelText;
        return labels.entrySet().stream().allMatch(label -> present.contains(label.getKey() + "=\"" + label.getValue() + "\""));
    }
}
