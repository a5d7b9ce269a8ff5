import {
  approvedPlanResult,
  type Event,
  type FeedPage,
  teleportResult,
} from "../../src/protocol/index.ts";

/**
 * Builders for feed events in the shapes of docs/PROTOCOL.md, and a log that pages them like the worker
 * does (`after_id`, `limit`, `has_more`). Shared by the scanner, poller and CLI tests.
 */

const CREATED_AT = "2026-01-01T00:00:00.000Z";

export function eventId(seq: number): string {
  return `evt_${String(seq).padStart(16, "0")}`;
}

type Unnumbered<E> = E extends Event ? Omit<E, "id" | "created_at"> : never;
export type EventBody = Unnumbered<Event>;

export const ev = {
  init(): EventBody {
    return {
      type: "system",
      subtype: "init",
      permission_mode: "plan",
      planner: "offline",
      tools: ["Read", "ExitPlanMode"],
    };
  },
  text(text = "Looking around the repository."): EventBody {
    return { type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] } };
  },
  toolUse(id: string, name: string, input: Record<string, unknown> = {}): EventBody {
    return {
      type: "assistant",
      message: { role: "assistant", content: [{ type: "tool_use", id, name, input }] },
    };
  },
  exitPlanMode(id: string): EventBody {
    return ev.toolUse(id, "ExitPlanMode");
  },
  toolResult(toolUseId: string, content: string, isError: boolean, asBlocks = false): EventBody {
    return {
      type: "user",
      message: {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: toolUseId,
            content: asBlocks ? [{ type: "text", text: content }] : content,
            is_error: isError,
          },
        ],
      },
    };
  },
  approve(toolUseId: string, plan: string, edited = false): EventBody {
    return ev.toolResult(
      toolUseId,
      `User has approved your plan. You can now start coding.\n\n${approvedPlanResult(plan, edited)}`,
      false,
    );
  },
  reject(toolUseId: string, feedback = "Please also cover the migrations."): EventBody {
    return ev.toolResult(toolUseId, `The user wants you to keep planning.\n\n${feedback}`, true);
  },
  teleport(toolUseId: string, plan: string): EventBody {
    return ev.toolResult(toolUseId, `Stop now.\n\n${teleportResult(plan)}`, true);
  },
  userText(text: string): EventBody {
    return { type: "user", message: { role: "user", content: text } };
  },
  result(subtype: string, message?: string): EventBody {
    return {
      type: "result",
      subtype,
      is_error: subtype !== "success",
      num_turns: 1,
      ...(message === undefined ? {} : { message }),
    };
  },
};

/** Numbers events from `firstSeq` on. */
export function numbered(bodies: readonly EventBody[], firstSeq = 1): Event[] {
  return bodies.map(
    (body, i) => ({ ...body, id: eventId(firstSeq + i), created_at: CREATED_AT }) as Event,
  );
}

/** An append-only event log served in pages, the way the worker's feed is. */
export class FeedLog {
  readonly events: Event[] = [];

  append(...bodies: EventBody[]): Event[] {
    const added = numbered(bodies, this.events.length + 1);
    this.events.push(...added);
    return added;
  }

  page(afterId: string | null, limit: number): FeedPage {
    const start = afterId === null ? 0 : this.events.findIndex((e) => e.id > afterId);
    const from = start === -1 ? this.events.length : start;
    const data = this.events.slice(from, from + limit);
    return {
      data,
      has_more: from + limit < this.events.length,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    };
  }
}
