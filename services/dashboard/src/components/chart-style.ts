/**
 * The charts' colours and the look of a small-sample line (components/Chart.tsx), apart so that
 * their promises (contrast, neighbours told apart, no solid line to a hollow point) are tested
 * without drawing a chart (test/chart-style.test.ts).
 *
 * A palette with enough contrast on white for bars and lines (WCAG 1.4.11 non-text, 3:1). The
 * sixth, the cancel outcomes' "Abandoned", is a light grey (3.3:1 on white): it was a purple that
 * read as the first's indigo ("Saved with a discount"); a grey, lighter than every other colour
 * and of no hue, is told apart without colour vision too.
 */
export const SERIES_COLORS = ['#5046e4', '#0a7d48', '#c0123c', '#b35c00', '#0b6e99', '#8a8f99', '#566176'];

/** A line's segment to or from a hollow point (Series' `faint`): dashed and pale, not a trend. */
const FAINT_SEGMENT_DASH = [4, 4];
const FAINT_SEGMENT_ALPHA = '66';

/** The two points a line's segment joins, as Chart.js's scriptable segment options are given them. */
export interface SegmentContext {
  p0DataIndex: number;
  p1DataIndex: number;
}

/**
 * Chart.js's `segment` options for a line with hollow points: a segment touching one is dashed
 * and pale, so a month over one or two campaigns (0% then 100%) is not the line's largest swing;
 * the line is solid only between solid points. `undefined`: the dataset's own style.
 */
export function faintSegments(faint: readonly boolean[], color: string) {
  const touchesFaint = (ctx: SegmentContext) => Boolean(faint[ctx.p0DataIndex] || faint[ctx.p1DataIndex]);
  return {
    borderDash: (ctx: SegmentContext) => (touchesFaint(ctx) ? FAINT_SEGMENT_DASH : undefined),
    borderColor: (ctx: SegmentContext) => (touchesFaint(ctx) ? `${color}${FAINT_SEGMENT_ALPHA}` : undefined),
  };
}
