"""Every field a scoring fills for a trajectory (METRICS.md), named once with what it is.

The other lists derive from this one, so a new metric is declared here alone: the aggregated
metrics (`aggregation.METRICS`), the fields a scoring fills (`scoring.SCORE_FIELDS`), the labels the
pages show and the judge question each metric rests on (`leaderboard`), the metrics of an evaluation's
summary (`views`), of the distribution plots (`plots`) and the leaderboard's columns hidden until asked for
(`report_views`), and the scores export's columns (`exports`), from which docs/exports.md is written
(`manage.py write_exports_doc`).
"""

from dataclasses import dataclass

from judges import questions as q

# What a field holds: a rate (a share in [0, 1]), another number, a yes/no verdict, a count or a text.
RATE, NUMBER, VERDICT, COUNT, TEXT = "rate", "number", "verdict", "count", "text"
DTYPES = {RATE: "Float64", NUMBER: "Float64", VERDICT: "boolean", COUNT: "Int64", TEXT: "string"}  # pandas


@dataclass(frozen=True)
class ScoreField:
    """`label` is given to the metrics aggregated per run (the leaderboard's columns) and to them alone;
    `judged` is the judge question kind a metric's value rests on (none: the metric needs no judge).
    Of the aggregated metrics, the `summarized` ones are shown in an evaluation's summary and, the rates,
    drawn in the distribution plots; those `hidden_by_default` are leaderboard columns a reader must ask for."""

    name: str
    type: str
    description: str
    label: str = ""
    judged: str = ""
    summarized: bool = True
    hidden_by_default: bool = False

    @property
    def aggregated(self) -> bool:
        return bool(self.label)

    @property
    def dtype(self) -> str:
        return DTYPES[self.type]


# In the order METRICS.md gives them, which is the order of the scores export's columns.
SCORE_REGISTRY = (
    ScoreField("step_success", RATE, "Step Success Rate: matched gold steps / gold steps (METRICS.md 1)",
               label="Step success", judged=q.STEP_MATCH),
    ScoreField("recovery", RATE, "Recovery Rate: recoveries / deviations (METRICS.md 2)",
               label="Recovery", judged=q.STEP_MATCH),
    # Repetitiveness needs a judge only for steps without structure (free text, which no agent's run is made of).
    ScoreField("repetitiveness", RATE, "Repetitiveness Rate: 1 - repeated steps / agent steps (METRICS.md 3)",
               label="Repetitiveness"),
    ScoreField("element_accuracy", RATE,
               "Element Accuracy: planned action = executed action, share of steps (METRICS.md 4)",
               label="Element accuracy"),
    ScoreField("partial_success", RATE, "Partial Success: satisfied requirements / requirements (METRICS.md 5)",
               label="Partial success", judged=q.REQUIREMENTS),
    ScoreField("grounded", VERDICT, "Final answer supported by the observations (METRICS.md 6)",
               label="Grounded", judged=q.GROUNDEDNESS, hidden_by_default=True),
    ScoreField("relevant", VERDICT, "Final answer satisfies the task's constraints (METRICS.md 6)",
               label="Relevant", judged=q.GROUNDEDNESS, hidden_by_default=True),
    ScoreField("correct", VERDICT, "Grounded and relevant (METRICS.md 6)",
               label="Correct", judged=q.GROUNDEDNESS, hidden_by_default=True),
    ScoreField("success", VERDICT, "Task success, the harness's verdict else the offline check's (METRICS.md 7)",
               label="Success (harness, else offline check)"),
    ScoreField("success_source", TEXT, "Where success came from: harness, string_match, url_match, agent_response "
                                       "(WebArena-Verified structured answer) or key_nodes (every key node reached)"),
    ScoreField("check_success", VERDICT,
               "The offline check's verdict (string/url match, structured answer), whatever the harness said"),
    ScoreField("check_source", TEXT,
               "Which evaluator decided the offline check: string_match, url_match, agent_response, ..."),
    ScoreField("plan_step_success", RATE, "Step Success of the stated plan (full-plan agents)",
               label="Plan step success", judged=q.STEP_MATCH, hidden_by_default=True),
    ScoreField("key_node_completion", RATE, "Key-node Completion: key nodes reached / key nodes (Mind2Web-Live; "
                                              "empty for tasks without key nodes)",
               label="Key-node completion", summarized=False, hidden_by_default=True),
    ScoreField("outcome_status", TEXT, "answered, na, early_stop, no_stop or crashed"),
    ScoreField("outcome_reason", TEXT, "Early stops: repeated_action, invalid_actions, max_steps or other"),
    ScoreField("agent_steps", COUNT, "n, agent steps"),
    ScoreField("gold_steps", COUNT, "m, gold steps (empty: no gold)"),
    ScoreField("matched_steps", COUNT, "Gold steps matched by Step Success"),
    ScoreField("deviations", COUNT, "Deviations from the gold path (Recovery)"),
    ScoreField("recoveries", COUNT, "Recoveries to the gold path (Recovery)"),
    ScoreField("mean_recovery_cost", NUMBER, "Mean agent steps from a deviation's start to its recovery"),
)
