/**
 * Where the issue tasks come from: Multi-SWE-bench's instances (real GitHub issues, the pull
 * request that fixed each, the base commit it was made on), as a public repository keeps them
 * in git, and the repositories they are issues of. build.ts reads both from mirrors; the texts
 * are never copied into this repository (README.md "Issue tasks").
 */

/** The repository that keeps the dataset's JSONL files, pinned. */
export const ISSUE_DATASET = {
  repo: "kuppireddypravalika/MSWE-validation-dataset",
  commit: "f3788671b1be72292be1b3dfc61063f97dd474a0",
  /** Multi-SWE-bench (ByteDance-Seed), one JSONL file per repository. */
  name: "Multi-SWE-bench",
} as const;

export interface IssueSource {
  /** The repository as its mirror folder spells it (`owner+name` under --mirrors). */
  repo: string;
  /** The JSONL file of its instances in {@link ISSUE_DATASET}. */
  file: string;
  /** The dataset's language folder: the language the task is reported under. */
  language: string;
  /** Tasks taken from this repository at most (a fixed sample by instance id). */
  cap: number;
  /** Held out: measured, never looked at while the planner is tuned. */
  heldOut: boolean;
}

const DATA = "MSWE-agent/data";
/** No repository may outweigh the rest: at most this many tasks from one. */
const CAP = 16;

/**
 * Every repository of the dataset whose file is stored in full (not as a Git LFS pointer) and
 * has at least 5 instances. honojs/hono and pallets/flask are never used: they are kept for an
 * independent check. A whole repository is held out or not, so that tuning on one cannot leak
 * into the held-out figures through the same code base.
 */
export const ISSUE_SOURCES: IssueSource[] = [
  {
    repo: "facebook/zstd",
    file: `${DATA}/c/facebook__zstd_dataset.jsonl`,
    language: "C",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "jqlang/jq",
    file: `${DATA}/c/jqlang__jq_dataset.jsonl`,
    language: "C",
    cap: CAP,
    heldOut: true,
  },
  {
    repo: "catchorg/Catch2",
    file: `${DATA}/cpp/catchorg__Catch2_dataset.jsonl`,
    language: "C++",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "fmtlib/fmt",
    file: `${DATA}/cpp/fmtlib__fmt_dataset.jsonl`,
    language: "C++",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "nlohmann/json",
    file: `${DATA}/cpp/nlohmann__json_dataset.jsonl`,
    language: "C++",
    cap: CAP,
    heldOut: true,
  },
  {
    repo: "simdjson/simdjson",
    file: `${DATA}/cpp/simdjson__simdjson_dataset.jsonl`,
    language: "C++",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "grpc/grpc-go",
    file: `${DATA}/go/grpc__grpc-go_dataset.jsonl`,
    language: "Go",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "zeromicro/go-zero",
    file: `${DATA}/go/zeromicro__go-zero_dataset.jsonl`,
    language: "Go",
    cap: CAP,
    heldOut: true,
  },
  {
    repo: "alibaba/fastjson2",
    file: `${DATA}/java/alibaba__fastjson2_dataset.jsonl`,
    language: "Java",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "FasterXML/jackson-core",
    file: `${DATA}/java/fasterxml__jackson-core_dataset.jsonl`,
    language: "Java",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "google/gson",
    file: `${DATA}/java/google__gson_dataset.jsonl`,
    language: "Java",
    cap: CAP,
    heldOut: true,
  },
  {
    repo: "mockito/mockito",
    file: `${DATA}/java/mockito__mockito_dataset.jsonl`,
    language: "Java",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "anuraghazra/github-readme-stats",
    file: `${DATA}/js/anuraghazra__github-readme-stats_dataset.jsonl`,
    language: "JavaScript",
    cap: CAP,
    heldOut: true,
  },
  {
    repo: "iamkun/dayjs",
    file: `${DATA}/js/iamkun__dayjs_dataset.jsonl`,
    language: "JavaScript",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "BurntSushi/ripgrep",
    file: `${DATA}/rust/BurntSushi__ripgrep_dataset.jsonl`,
    language: "Rust",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "sharkdp/bat",
    file: `${DATA}/rust/sharkdp__bat_dataset.jsonl`,
    language: "Rust",
    cap: CAP,
    heldOut: true,
  },
  {
    repo: "sharkdp/fd",
    file: `${DATA}/rust/sharkdp__fd_dataset.jsonl`,
    language: "Rust",
    cap: CAP,
    heldOut: true,
  },
  {
    repo: "tokio-rs/tokio",
    file: `${DATA}/rust/tokio-rs__tokio_dataset.jsonl`,
    language: "Rust",
    cap: CAP,
    heldOut: false,
  },
  {
    repo: "tokio-rs/tracing",
    file: `${DATA}/rust/tokio-rs__tracing_dataset.jsonl`,
    language: "Rust",
    cap: CAP,
    heldOut: false,
  },
];
