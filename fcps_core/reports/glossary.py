"""Words for every symbol: one short sentence per term, with its formula where it has one.

The dashboard uses these as column help and metric tooltips (``fcps_app.glossary``), the
HTML run report prints them under its tables, and the Overview lists them. Formulas follow
the paper (:data:`PAPER_TITLE`): section "Complexity Diagnostics", Eq. 3 (cell pressure),
Theorem 1 (validation selection, Eq. 6), Figure 1 (operational regime map).

A reader sees the paper's numbers, never its LaTeX labels: :func:`paper_ref` turns a label
(``thm:validation-selection``) into "Theorem 1 (validation selection)" and
:func:`readable_refs` does so for every label in a text (used for any text shown outside
the Paper reproduction page, which names the labels on purpose).

``term(key)`` accepts a canonical key or any alias (column names differ between tables:
``val_mse`` / ``validation MSE`` / ``val_risk``), so callers look up what they display.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the paper every formula and reference follows
PAPER_TITLE = "A Finite-Calibration Regime Map for LLM Judge Panels"
#: the paper's LaTeX labels -> their printed numbers (counted from fcps-paper.tex: numbered
#: equations, table and figure captions without sub-captions, and each theorem-like counter)
PAPER_NUMBERS = {
    "eq:finite-risk": 1, "eq:general-selection": 2, "eq:cell-pressure": 3, "eq:selection": 4,
    "eq:smooth-estimator": 5, "eq:validation-oracle": 6, "eq:table-integrated-bound": 7,
    "eq:balanced-table-rate": 8, "eq:table-win-condition": 9, "eq:parametric-bound": 10,
    "thm:validation-selection": 1, "prop:table": 1, "prop:balanced-table": 2, "prop:stacking": 3,
    "cor:regime-boundary": 1,
    "fig:operational-regime-map": 1, "fig:main-regime-diagnostics": 2, "fig:risk-k": 3, "fig:selected-k": 4,
    "fig:validation-risk": 5, "fig:complexity-risk": 6, "fig:unseen-risk": 7, "fig:distribution-summary": 8,
    "fig:complexity-risk-path": 9, "fig:marginal": 10, "fig:uncertainty-diagnostics": 11,
    "tab:protocol": 1, "tab:exact-cell-pressure": 2, "tab:main-finite-label-checks": 3,
    "tab:protocol-guardrails": 4, "tab:pool-artifact-guardrail": 5, "tab:prompt-perturbation": 6,
    "tab:candidate-menu-validation": 7, "tab:theory-evidence-map": 8, "tab:interpretation-checks": 9,
    "tab:baseline-envelope": 10, "tab:envelope-budget-k": 11, "tab:aggregation-baselines": 12,
    "tab:aggregation-selected": 13, "tab:k-family-ablation": 14, "tab:selected-k-instability": 15,
    "tab:regime-comparison": 16, "tab:oracle-interaction-gap-full": 17, "tab:table-like-family-comparison": 18,
    "tab:metric-robustness": 19, "tab:jury-baseline": 20, "tab:nll-selection-ablation": 21,
    "tab:tie-parse-fairness": 22, "tab:fixed-budget-allocation": 23, "tab:backoff-split-sensitivity": 24,
    "tab:interaction-diagnostic": 25, "tab:theory-proxy-winner": 26, "tab:table-sensitivity": 27,
    "tab:residual-shrinkage-hybrid": 28, "tab:cfps-path": 29, "tab:cold-start-few-label": 30,
    "tab:external-binary-validation-protocol": 31, "tab:external-binary-validation-results": 32,
    "tab:external-binary-theory-validation": 33, "tab:calibration-growth-new-dataset": 34,
    "tab:semireal-calibration-growth": 35, "tab:controlled-aggregator-regimes": 36,
    "tab:interaction-strength-sweep": 37, "tab:controlled-complexity": 38, "tab:within-group-correlation": 39,
}
_KINDS = {"eq": "Eq.", "thm": "Theorem", "prop": "Proposition", "cor": "Corollary", "fig": "Figure",
          "tab": "Table", "sec": "Section", "app": "Appendix"}
#: a label, with the word a text may already put before it ("Eq. eq:x", "paper Theorem thm:x")
_LABEL = re.compile(r"(?:\b(?:Eq\.|Equation|Theorem|Proposition|Corollary|Figure|Fig\.|Table|Section|Appendix)\s+)?"
                    r"\b(eq|thm|prop|cor|fig|tab|sec|app):([A-Za-z0-9][\w-]*)")


def paper_ref(label: str) -> str:
    """A paper label in words: ``thm:validation-selection`` -> "Theorem 1 (validation
    selection)"; an unknown label keeps its kind and name ("Table (k family ablation)")."""
    kind, _, name = label.partition(":")
    number = PAPER_NUMBERS.get(label)
    words = name.replace("-", " ")
    return f"{_KINDS.get(kind, kind.capitalize())}{'' if number is None else f' {number}'} ({words})"


def readable_refs(text: str) -> str:
    """``text`` with every paper label (``eq:...``, ``thm:...``, ``tab:...``, ``fig:...``)
    replaced by :func:`paper_ref` (a word already before it is not repeated)."""
    return _LABEL.sub(lambda m: paper_ref(f"{m.group(1)}:{m.group(2)}"), str(text))


@dataclass(frozen=True)
class Term:
    name: str           # how the term is displayed
    sentence: str       # one plain sentence
    formula: str = ""   # the formula, plain text (no LaTeX: tooltips do not render it)

    @property
    def help(self) -> str:
        return self.sentence + (f" Formula: {self.formula}." if self.formula else "")


_TERMS: dict[str, Term] = {
    # blocks and sizes
    "n_S": Term("n_S", "Labelled rows in the selection block S, used to order the judges into paths."),
    "n_M": Term("n_M", "Labelled rows in the calibration block M, used to fit each candidate aggregator "
                "(under cross-fitting: the fitting rows of one fold)."),
    "n_V": Term("n_V", "Labelled rows in the validation block V, on which the candidates are compared "
                "(under cross-fitting: every deployable labelled row, held out in turn)."),
    "n_T": Term("n_T", "Labelled rows in the research test block T. T only audits the choice; it never "
                "informs it."),
    "block": Term("block", "S orders judges, M fits aggregators, V compares candidates, T only audits."),
    "groups": Term("groups", "Distinct item groups in the block; rows of one group never straddle blocks."),
    # candidates
    "family": Term("family", "The aggregator that turns the judges' outputs into one prediction: a joint "
                   "table over output patterns (table-like) or a low-dimensional stacker (scalar)."),
    "path": Term("path", "An ordering of the judges built on S; a candidate uses the first K judges of it.",
                 "path rule in {validation-greedy, marginal, cost-aware, ...}"),
    "K": Term("prefix K", "How many judges, from the front of the path, the candidate uses."),
    "candidate": Term("candidate", "One (path, prefix K, family) triple: a way to deploy the panel."),
    "menu_size": Term("menu size |C|", "Number of candidates compared; the more there are, the more the best "
                      "one's held-out risk flatters it.", "|C| = paths x prefixes x families"),
    "val_mse": Term("held-out MSE", "Mean squared error of the candidate's predictions on rows it was not "
                    "fitted on (V, or the cross-fitted folds). Lower is better.", "mean (y - f(x))^2"),
    "val_risk": Term("held-out risk", "The candidate's held-out loss under the chosen objective (MSE or NLL) "
                     "on rows it was not fitted on. Lower is better."),
    "test_mse": Term("test MSE (T)", "Mean squared error on the research test block T: an audit of the choice, "
                     "never used to make it."),
    "deployed_risk": Term("deployed risk", "Bias-corrected estimate of the deployed predictor's risk on new items, "
                          "with a 95% interval: the winner's own held-out risk is optimistic because it was the "
                          "minimum over the menu.", "bootstrap over groups with the choice rule replayed in-bag"),
    "validation_scale": Term("validation scale", "How much selection noise a menu of |C| candidates adds at n_V "
                             "validation rows; compare it with the risk differences you care about.",
                             "sqrt(log|C| / n_V)"),
    "theorem1_bound": Term("Theorem 1 bound", "With probability 1 - delta the chosen candidate's risk is within "
                           "this of the best candidate's (losses in [0, 1]; Theorem 1 (validation selection) of "
                           "the paper \"A Finite-Calibration Regime Map for LLM Judge Panels\").",
                           "2 sqrt(log(2|C|/delta) / (2 n_V))"),
    "paired_se": Term("paired SE", "Standard error of the per-row loss difference between two candidates on the "
                      "same held-out rows, clustered by item group."),
    "tie": Term("statistical tie", "Candidates whose held-out risk is within one paired standard error of the best "
                "one: the data cannot tell them apart."),
    "choice": Term("choice rule", "How the deployed candidate is picked: argmin (lowest held-out risk), "
                   "simplest_within_se, tie_average (average the tied candidates) or cheapest_tied."),
    "protocol": Term("protocol", "crossfit: repeated grouped K-fold over every deployable label; split: the "
                     "paper's fixed S/M/V blocks."),
    "alpha": Term("table alpha", "Smoothing of each table cell toward the calibration mean.",
                  "g(z) = (N_z mean_y(z) + alpha mean_y) / (N_z + alpha)"),
    "fallback": Term("table fallback", "What a table predicts for a pattern it never saw: the global calibration "
                     "mean, or the cell of a shorter prefix."),
    "baseline": Term("baseline", "A fixed recipe a practitioner would use without fcps (best single judge, majority "
                     "vote, logistic over all judges, ...), scored on the same held-out rows."),
    "diff_vs_selected": Term("difference", "Baseline risk minus the selection's risk on the same rows; above 0 "
                             "means the selection is better."),
    # complexity diagnostics
    "Q_K": Term("Q_K", "Nominal pattern alphabet: how many output patterns K judges could produce.",
                "Q_K = product of the K judges' alphabet sizes"),
    "S_K": Term("S_K", "Occupied calibration support: patterns seen at least once in calibration.",
                "S_K = |{z : N_z > 0}|"),
    "H_K": Term("H_K", "Effective support: how many patterns the calibration rows really spread over.",
                "H_K = exp(-sum_z p_z log p_z), p_z the calibration frequencies"),
    "H_K/n_M": Term("H_K / n_M", "Effective support per calibration label: the practical proxy for table pressure."),
    "N_z": Term("N_z", "Calibration rows that show output pattern z: the labels behind that table cell."),
    "p_z": Term("p_z", "Share of calibration rows with pattern z."),
    "q_z": Term("q(z)", "Share of the traffic rows with pattern z (the deployment audit's p_z)."),
    "unseen_val": Term("unseen rate", "Share of held-out rows whose pattern never occurred in calibration "
                       "(N_z = 0): the table can only fall back there."),
    "unseen_test": Term("unseen rate (T)", "Share of test-block rows whose pattern never occurred in calibration."),
    "cell_pressure": Term("cell pressure", "Expected inverse count of the cell a new row lands in, plus the mass "
                          "that lands in no cell: the variance a joint table pays (Eq. 3, cell pressure, of the paper \"A Finite-Calibration Regime Map for LLM "
                          "Judge Panels\").",
                          "sum_z p_z / N_z + u"),
    "V_cell": Term("V_cell", "Held-out plug-in estimate of the cell pressure.",
                   "sum over N_z > 0 of p_T(z) / N_z + unseen rate"),
    "V_proxy": Term("V_proxy", "Cold-start proxy of the cell pressure, observable before any table is fitted.",
                    "H_K / n_M + unseen rate"),
    # regime
    "interaction_gain": Term("interaction gain", "Held-out risk of the best scalar candidate minus that of the best "
                             "table-like one; positive favours the joint table."),
    "table_pressure": Term("table pressure", "Effective support per label plus unseen rate of the best table-like "
                           "candidate.", "H_K / n_M + unseen rate"),
    "quadrant": Term("regime quadrant", "Where the panel sits on the map of interaction gain against table pressure: "
                     "joint table, shrink or collect labels, keep scalar, or prefer scalar."),
    "delta": Term("delta (table - scalar)", "Test risk of the table menu's choice minus the scalar menu's, paired over "
                  "splits; positive favours scalar aggregation."),
    "regret": Term("regret", "Risk of the choice minus the risk of the best candidate in hindsight."),
    # judges
    "accuracy": Term("accuracy", "Share of items where the judge's verdict (thresholded at 1/2) matches the human "
                     "label."),
    "kappa": Term("Cohen's kappa", "Agreement beyond chance: 1 perfect, 0 what chance alone would give.",
                  "(p_observed - p_chance) / (1 - p_chance)"),
    "auc": Term("AUC", "Probability that a random positive item scores above a random negative one (binary labels); "
                "below 1/2 for a judge whose score falls as the label rises."),
    "direction": Term("direction", "Whether the judge's score rises or falls as the human label rises (the sign of "
                      "their rank correlation); a quality metric read against an error-score label falls. Isotonic "
                      "calibrations of one judge run the same way. A judge with one output on every row is "
                      "constant: it neither rises nor falls."),
    "brier": Term("Brier score", "Mean squared error of a probability against the 0/1 label; 0.25 is a coin flip.",
                  "mean (y - p)^2"),
    "ece": Term("ECE", "Expected calibration error: mean gap between predicted probability and observed frequency, "
                "weighted by bin size."),
    "coverage": Term("coverage", "Share of items the judge gave a usable output for."),
    "parse_errors": Term("parse-error rate", "Share of items whose judge output could not be read."),
    "effective_judges": Term("effective independent judges", "How many independent judges the panel's errors are "
                             "worth.", "K^2 / ||R||_F^2, R the error-correlation matrix"),
    "error_corr": Term("error correlation", "Correlation between two judges' errors against the human label; near 1 "
                       "means they fail on the same items."),
    "weight": Term("weight", "The judge's signed coefficient in the deployed predictor (where the family has one); "
                   "for an average of models, the mean over them (0 in a model without the judge)."),
    "drop_one": Term("drop-one change", "Held-out risk of what the same choice rule deploys without this judge (the "
                     "best candidates that do not call it, no refit) minus the deployed choice's, on the same rows; "
                     "positive: dropping it raises the risk, so the judge helps."),
    "shared_with": Term("shared with", "Deployed judges that are near-duplicates of this one: their weights are "
                        "shared between them, so neither weight alone says what the judge adds."),
    # deployment audit
    "psi": Term("PSI", "Population stability index between calibration and traffic output distributions; above "
                "0.25 is a large shift.", "sum (q - p) log(q / p)"),
    "tv": Term("total variation", "Largest difference in probability any event has between calibration and traffic.",
               "1/2 sum_z |q_z - p_z|"),
    "status": Term("status", "A run's state (done or failed); for a traffic audit, OK, WARN or REFUSE from "
                   "documented thresholds on unseen rate, missing outputs, cell pressure and drift."),
    # panels and uploads
    "schema": Term("schema", "How a judge's outputs are read: pairwise (A/B/tie), binary, rubric (ordered scores), "
                   "continuous (binned for tables) or categorical."),
    "group_id": Term("group", "Items of one group (e.g. one prompt) are dependent: blocks and folds never split a group."),
    "n_rows": Term("rows", "Rows (items) in the panel or block, labelled or not."),
    "n_labelled": Term("labelled rows", "Items with a human label; only these can calibrate or validate."),
    "n_judges": Term("judges", "Judge columns in the panel."),
    "version": Term("version", "For a run, the fcps version that computed it; for a panel, its content digest."),
    "panel_version": Term("panel version", "Content digest of the panel a run was computed on: a replaced panel "
                          "refuses late saves."),
    "licence": Term("licence", "Licence or provenance note stored with the panel."),
    "created_at": Term("created", "When the panel was stored."),
    "base_rate": Term("base rate", "Mean human label: the risk of always predicting it is the no-judge baseline."),
    # audits and planning
    "threshold": Term("drift threshold", "The total variation a no-drift sample of this size exceeds only 1% of the "
                      "time (seeded bootstrap from calibration); above it, drift is flagged."),
    "chi2_p": Term("chi-square p", "p-value of a chi-square test that traffic and calibration outputs share one "
                   "distribution; small means they differ."),
    "missing_share": Term("missing share", "Share of rows where the judge gave no output (calibration vs traffic)."),
    "agreement": Term("agreement", "Share of items on which two judges (or a judge and the deployed panel) give the "
                      "same verdict."),
    "weight_share": Term("weight share", "The judge's share of the deployed predictor's total absolute weight "
                         "(averaged over the members of a tie average)."),
    "risk_change": Term("risk change", "Held-out risk after the change minus before; below 0 means the change helps."),
    "pressure_change": Term("pressure change", "Table pressure (H_K / n_M + unseen rate) after the change minus "
                            "before; above 0 means the table's cells get thinner."),
    "abstain_rate": Term("abstain rate", "Share of items on which the judge abstained (tie or no verdict)."),
    "decision": Term("decision", "What the planner advises for this judge or budget, from the interval of its effect."),
    "traffic_rows": Term("traffic rows", "Rows of the uploaded traffic that show this pattern."),
    "mean_label": Term("mean label (M)", "Mean human label of the calibration rows in this cell (empty when N_z = 0)."),
    "freq_val": Term("share of held-out rows", "Share of held-out rows that show this pattern: where the table's "
                     "risk is measured."),
    "freq_test": Term("share of T rows", "Share of the research test block T that shows this pattern."),
    "cell_status": Term("cell status", "unseen: N_z = 0, the table falls back; thin: few calibration rows, a noisy "
                        "cell mean."),
    "table_test_mse": Term("table test MSE", "Mean test-block MSE over splits of the candidate the table menu chose "
                           "on validation."),
    "scalar_test_mse": Term("scalar test MSE", "Mean test-block MSE over splits of the candidate the scalar menu chose "
                            "on validation."),
    "ci_low": Term("95% low", "Lower end of the 95% interval."),
    "ci_high": Term("95% high", "Upper end of the 95% interval."),
    "table_K_mean": Term("mean table K", "Mean prefix K the table menu chose over splits."),
    "note": Term("note", "Your annotation of the run, stored with it."),
    # run-report and table columns
    'judge': Term('judge', 'The judge (a column of the panel).'),
    'judges': Term('judges', 'The judges the candidate uses, in path order.'),
    'index': Term('index', "Candidate number within the run's menu."),
    'selected': Term('selected', 'Whether this is the deployed candidate (or a member of the deployed tie average).'),
    'val_se': Term('held-out SE', "Standard error of the candidate's held-out risk, clustered by item group; "
                   "risk ± 1.96 SE is its 95% interval."),
    'missing_rate': Term('missing rate', 'Share of rows where the judge gave no output at all.'),
    'deployed': Term('deployed', 'Whether the deployed predictor uses this judge.'),
    'members': Term('members', 'How many of the averaged tied candidates use this judge.'),
    'pair': Term('pair', 'Two judges whose agreement or error correlation is at least the redundancy threshold.'),
    'prediction': Term('prediction', 'What the deployed predictor outputs for this pattern.'),
    'unseen_cell': Term('unseen', 'The pattern never occurred in calibration (N_z = 0): the predictor falls back there.'),
    'ci': Term('95% interval', '95% interval of the difference (paired over the same held-out rows, clustered by group).'),
    'gain_threshold': Term('gain threshold', 'Interaction gain above which the joint table is worth its variance.'),
    'pressure_threshold': Term('pressure threshold', 'Table pressure above which the joint table is starved of labels.'),
    'interaction_gain_ci': Term('interaction gain 95% interval', '95% interval of the interaction gain.'),
    'labels_to_resolve': Term('labels to resolve', 'About how many more held-out labels would make the regime call determined.'),
    'determined': Term('determined', "Whether the interaction gain's interval clears its threshold (else the call is undetermined)."),
    'splits': Term('splits', 'Independent random splits averaged at this budget.'),
    'delta_ci': Term('delta 95% interval', '95% interval of the table-minus-scalar difference over the splits.'),
    'delta_se': Term('delta SE', 'Standard error of the table-minus-scalar difference over splits.'),
    'unseen_mean': Term('mean unseen rate', "Mean unseen rate of the table menu's choice on the test block."),
    'V_cell_mean': Term('mean V_cell', "Mean held-out cell pressure of the table menu's choice."),
    'V_proxy_mean': Term('mean V_proxy', "Mean cold-start cell-pressure proxy of the table menu's choice."),
    'out_of_support': Term('out of support', 'Share of traffic rows outside the calibration support (unseen patterns, or scores outside the calibrated range).'),
    'value': Term('value', "The setting's value."),
    'parameter': Term('parameter', 'A setting of the run, as stored.'),
    'n_fit': Term('n_fit', 'Labelled rows each candidate was fitted on (under cross-fitting: the mean over folds).'),
    'n_deployable': Term('deployable labels', 'Labelled rows outside the test block T: every row the deployed predictor is fitted on.'),
    'shifted': Term('shifted', "Whether the judge's drift exceeds its no-drift threshold."),
    'path_rule': Term('path rule', "The rule that ordered the judges into the candidate's path (info_first, complexity_penalized, random, cfps, ...)."),
    'grid_size': Term('grid size', "How many settings of the family's own parameter (e.g. shrinkage) were tried for this candidate."),
    'val_nll': Term('held-out NLL', "The candidate's held-out negative log-likelihood (log loss) on rows it was not fitted on. Lower is better."),
    'test_nll': Term('test NLL (T)', 'Negative log-likelihood on the research test block T: an audit, never used for the choice.'),
    'cell_pressure_sum': Term('cell pressure (seen cells)', 'The first term of the cell pressure: sum over seen patterns of p(z) / N_z (without the unseen rate).'),
    'regret_vs_K_le_3': Term('regret vs K<=3', "Test MSE of the table menu's choice minus that of the table candidate chosen among prefixes K <= 3 (mean over splits; above 0: the unrestricted choice did worse)."),
    'regret_vs_K_le_3_se': Term('regret SE', 'Standard error of the regret over the splits.'),
    'seed': Term('seed', 'Random seed of the run (splits, folds, bootstrap): the same seed repeats the run exactly.'),
    "in_support": Term("in support", "Whether the row's pattern (or each score, for scalar families) was seen in "
                       "calibration."),
    "cost": Term("cost", "Sum of the candidate's judges' per-item costs."),
    # dashboard tables: stored panels and runs, comparisons, blocks, ties
    "name": Term("name", "The stored panel's name (the Panel picker on every page offers it)."),
    "runs": Term("runs", "Stored runs on this panel."),
    "run_id": Term("run_id", "Stored run number: open it in the Results browser (python -m fcps_core runs lists "
                   "them)."),
    "panel": Term("panel", "The stored panel the run was computed on."),
    "kind": Term("kind", "Run kind: select (a selection), sweep (a calibration-growth sweep) or audit (a traffic "
                 "audit)."),
    "finished_at": Term("finished", "When the run finished (UTC)."),
    "seconds": Term("seconds", "How long the run took, in seconds."),
    "has_predictor": Term("has predictor", "Whether the run stores a deployable predictor (Deploy & monitor can "
                          "use it)."),
    "deployed_family": Term("deployed family", "The family of the predictor the run deploys (for an average of "
                            "statistically tied candidates, the choice rule's name)."),
    "fact": Term("fact", "A fact or a setting of the compared runs, as stored (param: ... are the run's settings)."),
    "differs": Term("differs", "Whether the compared runs have different values here."),
    "role": Term("role", "What the block does."),
    "block_rows": Term("labelled rows", "Labelled rows in the block (under cross-fitting S, M and V are pooled: "
                       "each fold fits on its training rows, and every deployable row is held out in turn)."),
    "compared": Term("compared", "better: the 95% interval of the difference lies above 0; worse: below 0; no clear "
                     "difference: it contains 0 (no claim either way)."),
    "judge_set_stability": Term("judge-set stability", "Mean overlap (Jaccard) between the judges the candidate "
                                "used in each fold and the deployed judge set; 1 = the same judges every fold."),
    "repeats": Term("repeats", "The cross-fitted repeats whose folds fitted the candidate. Fewer than the run's "
                    "repeats (1): after the first repeat it was far behind the best candidate calling a subset of its "
                    "judges, and the best of its side of the regime verdict, by more than the screen's multiple "
                    "(--screen-se, default 2) of its SE plus the largest SE ahead, so no judge limit can make it "
                    "chosen or tied; the later repeats did not refit it, and its risk, SE and diagnostics are the "
                    "first repeat's."),
    "same_predictor": Term("same predictor", "An alternative with the deployed predictor's family, parameters and "
                           "judges, reached by another path: identical held-out predictions, so not a different "
                           "choice."),
    "pattern": Term("pattern", "The joint output pattern z of the judges, one output per judge."),
    "item_id": Term("item id", "Item identifier from the panel."),
    "params": Term("parameters", "The candidate's fitted family parameters (e.g. shrinkage), '-' when it has none."),
    "mean_prediction": Term("mean prediction", "Mean deployed prediction over the rows in this cell."),
    "latency": Term("latency", "Largest per-item latency among the candidate's judges (they run in parallel)."),
    # label-next (fcps_core.planning.label_next)
    "chosen_by": Term("chosen by", "audit: drawn uniformly at random from the pool, so held-out risks read on the "
                      "audit rows stay those of a random sample; active: chosen for the largest expected variance "
                      "reduction of the deployed predictor."),
    "audit_share": Term("audit share", "Share of every label-next batch drawn uniformly at random (the audit "
                        "sample); the rest is chosen actively."),
    "evaluation_rows": Term("evaluation rows", "The labelled rows held-out risks, ties and the deployed-risk "
                            "estimate are read on: every labelled row except the items label-next chose actively "
                            "(those still enter every fit)."),
    "inclusion_probability": Term("inclusion probability", "Chance that the audit draw reached this item: the "
                                  "audit part's walk length over the pool rows not yet in the evaluation rows."),
    "expected_variance_reduction": Term("expected variance reduction", "How much labelling the item is expected "
                                        "to lower the deployed predictor's prediction variance summed over the "
                                        "traffic (V-optimal design; for a table, the cell's traffic share over "
                                        "N_z (N_z + 1)).", "sigma^2(x) x' A^-1 Sigma A^-1 x / (1 + x' A^-1 x)"),
}

_ALIASES: dict[str, str] = {
    "validation MSE": "val_mse", "val risk": "val_risk", "held-out risk": "val_risk", "risk": "val_risk",
    "crossfit_mse": "val_mse", "cross-fitted MSE": "val_mse", "test risk": "test_mse", "test_risk": "test_mse",
    "prefix K": "K", "|C|": "menu_size", "menu size |C|": "menu_size", "scale": "validation_scale",
    "unseen": "unseen_val", "unseen rate": "unseen_val", "unseen_rate": "unseen_val",
    "H_K / n_M": "H_K/n_M", "V-tilde": "V_proxy", "pressure": "cell_pressure", "deployment cell pressure":
    "cell_pressure", "q(z)": "q_z", "N_z in calibration": "N_z", "paired SE": "paired_se", "se": "paired_se",
    "difference": "diff_vs_selected", "cohen_kappa": "kappa", "kappa_with_labels": "kappa",
    "brier_isotonic": "brier", "ECE": "ece", "parse_error_rate": "parse_errors", "n_effective": "effective_judges",
    "path rule": "path", "quadrant": "quadrant", "regime": "quadrant",
    "delta (table - scalar)": "delta", "regret vs K<=3": "regret",
    "group_id": "group_id", "rows": "n_rows", "labelled": "n_labelled", "labelled rows": "block_rows",
    "judges_count": "n_judges", "created": "created_at", "base rate": "base_rate",
    "tv_threshold": "threshold", "chi-square p": "chi2_p", "chi2": "chi2_p", "missing": "missing_share",
    "weight share": "weight_share", "drop risk change": "drop_one", "drop_risk_change": "drop_one",
    "risk change": "risk_change", "add_risk_change": "risk_change", "pressure change": "pressure_change",
    "abstain": "abstain_rate", "traffic rows": "traffic_rows", "mean label (M)": "mean_label",
    "share of held-out rows": "freq_val", "share of T rows": "freq_test", "cell status": "cell_status",
    "table test MSE": "table_test_mse", "scalar test MSE": "scalar_test_mse", "95% low": "ci_low",
    "95% high": "ci_high", "mean table K": "table_K_mean", "ECE of the deployed predictor": "ece",
    "parameters": "params", "mean prediction": "mean_prediction", "run": "run_id", "finished": "finished_at",
    "same as": "same_predictor",
}


def term(key: str) -> Term | None:
    """The glossary entry for a key or an alias (case-sensitive first, then case-insensitive)."""
    key = _ALIASES.get(key, key)
    if key in _TERMS:
        return _TERMS[key]
    lowered = {k.lower(): k for k in _TERMS} | {k.lower(): v for k, v in _ALIASES.items()}
    hit = lowered.get(str(key).lower())
    return _TERMS.get(hit) if hit else None


def help_text(key: str) -> str | None:
    """One-sentence help (with formula) for a displayed label, or None if the glossary has no entry."""
    t = term(key)
    return t.help if t else None


def entries() -> list[Term]:
    """Every term, in glossary order (for the Overview and the report)."""
    return list(_TERMS.values())


def search(query: str) -> list[Term]:
    """The terms whose name, sentence or formula contains every word of ``query``
    (case-insensitive; an empty query gives every term), for the searchable glossary."""
    words = str(query or "").lower().split()
    return [t for t in _TERMS.values()
            if all(w in f"{t.name} {t.sentence} {t.formula}".lower() for w in words)]
