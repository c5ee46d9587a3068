package io.turnstream.tools;

import io.turnstream.model.ToolCall;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.schema.SchemaRegistryException;
import java.io.IOException;
import java.time.Clock;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Takes each tool-call record read: dead-letters what is not a call or claims a tenant its writer may not
 * (see {@link TenantClaims}: the claim must be the gateway's for the call's tenant and run), skips a call the ledger shows
 * answered or in progress, answers "outcome unknown" for a non-idempotent call started before a restart,
 * and hands every other call to the scheduler.
 */
final class ToolCallIntake {

    private static final Logger LOG = LoggerFactory.getLogger(ToolCallIntake.class);

    private final WireFormat wire;
    private final TenantClaims claims;
    private final CallLedger ledger;
    private final OffsetTracker offsets;
    private final ResultOutbox outbox;
    private final ToolScheduler scheduler;
    private final Clock clock;

    ToolCallIntake(WireFormat wire, TenantClaims claims, CallLedger ledger, OffsetTracker offsets, ResultOutbox outbox,
                   ToolScheduler scheduler, Clock clock) {
        this.wire = wire;
        this.claims = claims;
        this.ledger = ledger;
        this.offsets = offsets;
        this.outbox = outbox;
        this.scheduler = scheduler;
        this.clock = clock;
    }

    /**
     * @param fence {@code llm.control}'s ends taken after the poll that read the record: the call starts once the cancel
     *              listener has read past them
     * @throws SchemaRegistryException when the record cannot be read for now (on Avro, a schema registry that cannot be
     *                                 reached): nobody's record's fault, so it is neither dead-lettered nor counted as
     *                                 read, and the caller reads it again later
     */
    void accept(ConsumerRecord<String, byte[]> record, ControlFence fence) {
        RecordPosition position = new RecordPosition(new TopicPartition(record.topic(), record.partition()), record.offset());
        ToolCall call = null;
        String unreadable = null;
        try {
            call = wire.read(record.topic(), record.value(), ToolCall.class);
        } catch (IOException | IllegalArgumentException e) {
            unreadable = "not a ToolCall: " + e.getMessage();
        }
        offsets.read(position);
        if (unreadable != null) {
            deadLetter(record, position, unreadable);
            return;
        }
        if (call.callId() == null || call.callId().isBlank()) {
            deadLetter(record, position, "ToolCall without a callId");
            return;
        }
        if (call.turnId() != null && call.turnId().contains("/")) {
            deadLetter(record, position, "ToolCall whose turnId holds '/': " + call.turnId());
            return;
        }
        if (call.turnId() == null) {
            if (record.key() == null) {
                deadLetter(record, position, "ToolCall without a turnId or record key");
                return;
            }
            call = new ToolCall(call.callId(), record.key(), call.threadId(), call.runId(), call.itemId(), call.toolName(),
                    call.arguments(), call.requestedAt(), call.tenantId());
        }
        String untrusted = claims.problem(call.tenantId(), call.runId(), TenantClaims.claimIn(record.headers()));
        if (untrusted != null) {
            deadLetter(record, position, "ToolCall's tenant not trusted: " + untrusted);
            return;
        }
        MDC.put("turnId", call.turnId());
        try {
            CallKey key = CallKey.of(call);
            CallLedger.Mark mark = ledger.markOf(position, key);
            if (mark == CallLedger.Mark.COMPLETED || ledger.seenBefore(position, key)) {
                LOG.info("call {} at offset {} was answered or is in progress already; not run again", call.callId(), record.offset());
                offsets.answered(position);
            } else if (mark == CallLedger.Mark.STARTED) {
                outbox.rememberTrace(record, position);
                LOG.warn("call {} of non-idempotent tool {} was started before a restart; answering outcome unknown",
                        call.callId(), call.toolName());
                outbox.add(new ResultOutbox.Answer(call, position, ToolResults.refusal(call, ToolErrors.OUTCOME_UNKNOWN,
                        "Tool " + call.toolName() + " was started before the tool executor restarted, and its outcome is "
                                + "unknown: it was not run again because it is not idempotent. Check its effects before "
                                + "calling it again.", clock.millis())));
            } else {
                outbox.rememberTrace(record, position);
                scheduler.submit(call, position, fence);
            }
        } finally {
            MDC.remove("turnId");
        }
    }

    private void deadLetter(ConsumerRecord<String, byte[]> record, RecordPosition position, String reason) {
        LOG.warn("dead-lettering tool-call record {}-{}@{}: {}", record.topic(), record.partition(), record.offset(), reason);
        outbox.add(new ResultOutbox.DeadLetter(record, position, reason));
    }
}
