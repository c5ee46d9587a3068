package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import org.junit.jupiter.api.Test;

class OutputLimitsTest {

    private static final String NOTICE = "[output truncated: the limit is 3 lines and 10 bytes; narrow the request "
            + "(a smaller path, a stricter pattern, an offset) to see the rest]";
    private final OutputLimits limits = new OutputLimits(10, 3);

    @Test
    void outputWithinTheLimitsPassesUnchanged() {
        assertThat(limits.cap("a\nb\nc")).isEqualTo("a\nb\nc");
        assertThat(limits.cap("a\nb\nc\n")).isEqualTo("a\nb\nc\n");
        assertThat(limits.cap("0123456789")).isEqualTo("0123456789");
    }

    @Test
    void longerOutputIsCutAtALineOrCharacterBoundaryWithANotice() {
        assertThat(limits.cap("a\nb\nc\nd")).isEqualTo("a\nb\nc\n" + NOTICE);
        assertThat(limits.cap("01234567890")).isEqualTo("0123456789\n" + NOTICE);
        assertThat(limits.cap("ééééé€")).as("a 3-byte character that does not fit is left out whole")
                .isEqualTo("ééééé\n" + NOTICE);
    }

    @Test
    void jsonOutputIsKeptWhenItFitsAndBecomesCutTextWhenItDoesNot() {
        var small = JsonNodeFactory.instance.objectNode().put("a", 1);
        var large = JsonNodeFactory.instance.objectNode().put("key", "a long value");

        assertThat(limits.cap(small)).isSameAs(small);
        assertThat(limits.cap(large)).isEqualTo(TextNode.valueOf("{\"key\":\"a \n" + NOTICE));
    }
}
