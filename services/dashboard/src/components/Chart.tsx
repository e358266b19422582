import { useEffect, useRef } from 'react';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart as ChartJs,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type CartesianScaleOptions,
  type ChartConfiguration,
  type Plugin,
  type Scale,
} from 'chart.js';
import { LOCALE } from '../format.js';
import { faintSegments, SERIES_COLORS } from './chart-style.js';
import { useStacked } from './use-stacked.js';

/**
 * A chart drawn by Chart.js (canvas), with its data as a real table beside it: the canvas is an
 * image named after the chart, and the table, in a disclosure under it, is what a screen reader
 * or a person who wants the exact figures reads. Only the controllers and elements the
 * overview uses are registered, so the bundle carries only those.
 */
ChartJs.register(
  BarController,
  BarElement,
  CategoryScale,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
);

/**
 * Room left of the plot for the first x label once Chart.js slants the labels (a narrow chart,
 * as at 390 px). It reserves the label's run along the slant but not all of the label's height
 * that leans further left, so under a narrow y axis (small counts) the first month was cut at
 * the canvas's edge. A line of the 12 px tick font covers the most that lean can be.
 */
const SLANTED_LABEL_ROOM_PX = 14;

/**
 * Room left of a horizontal chart's category labels, so that the widest is not flush with the
 * canvas's edge (where a cut and a fit look alike).
 */
const CATEGORY_LABEL_MARGIN_PX = 8;

/**
 * The least height of a chart's plot (its area inside the axes). Chart.js gives the legend and the
 * axes their room first and the plot what is left: at 390 px the six outcomes' legend took five
 * rows of the 240 px box and left the stacked bars about 40 px, lower than the legend.
 */
const MIN_PLOT_HEIGHT_PX = 150;

/**
 * Grows the chart's box (its min-height) by what the plot lacks of MIN_PLOT_HEIGHT_PX once
 * Chart.js has laid out the legend and axes; Chart.js, watching the box, draws again at the new
 * height. A min-height below the stylesheet's height changes nothing, so a wider screen, whose
 * legend takes fewer rows, gets the box's own height back.
 */
const minPlotHeight: Plugin = {
  id: 'minPlotHeight',
  afterLayout(chart) {
    const box = chart.canvas.parentElement;
    if (!box) return;
    const short = MIN_PLOT_HEIGHT_PX - (chart.chartArea.bottom - chart.chartArea.top);
    const wanted = `${Math.ceil(box.clientHeight + short)}px`;
    if (Math.abs(short) >= 1 && box.style.minHeight !== wanted) box.style.minHeight = wanted;
  },
};

/** Legend boxes a little smaller than Chart.js's 40 px: more entries to a row on a phone. */
const LEGEND_BOX_PX = 12;

/** The tick labels' font: Chart.js's own, at a size set here so that wrapLabel measures what is drawn. */
const TICK_FONT_SIZE = 12;

/**
 * A label as the lines it is drawn in, each no wider than `room`: the label itself when it fits,
 * else its words, as many to a line as fit (a word wider than `room` is a line of its own).
 */
function wrapLabel(ctx: CanvasRenderingContext2D, label: string, room: number): string | string[] {
  if (ctx.measureText(label).width <= room) return label;
  const lines: string[] = [];
  for (const word of label.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && ctx.measureText(`${last} ${word}`).width <= room)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** What the category axis takes beside its labels' width: the tick padding (twice, as Chart.js counts it) and mark. */
function axisExtra(scale: Scale): number {
  // Resolved by Chart.js: every option has its value (the type says a category scale's may be missing).
  const { ticks, grid } = scale.options as unknown as CartesianScaleOptions;
  return 2 * ticks.padding + (grid.drawTicks ? (grid.tickLength ?? 0) : 0);
}

/** Runs `measure` with the scale's context set to the tick font. */
function inTickFont<T>(scale: Scale, measure: (ctx: CanvasRenderingContext2D) => T): T {
  scale.ctx.save();
  scale.ctx.font = `${TICK_FONT_SIZE}px ${ChartJs.defaults.font.family ?? 'sans-serif'}`;
  try {
    return measure(scale.ctx);
  } finally {
    scale.ctx.restore();
  }
}

/**
 * The category labels of a horizontal chart (decline categories, cancellation reasons), wrapped
 * to the room Chart.js gives the axis: at most half the chart's width (`maxWidth`), less the tick
 * padding and mark. A label wider than that was drawn anyway, right-aligned to the axis, and ran
 * off the canvas's left edge ("authentication required" at 320 px, and at 801 px where two
 * charts share a row beside the side navigation).
 */
function wrappedCategory(this: Scale, value: number | string): string | string[] {
  const room = this.maxWidth - axisExtra(this) - 1;
  return inTickFont(this, (ctx) => wrapLabel(ctx, this.getLabelForValue(Number(value)), room));
}

/**
 * And should one word still be wider than that room (a screen narrower than 320 px, a wider
 * fallback font), the axis takes the width of its widest line rather than cut it: the plot is
 * narrower, every label whole.
 */
function fitWidestCategory(scale: Scale): void {
  const widest = inTickFont(scale, (ctx) =>
    Math.max(0, ...scale.ticks.flatMap((tick) => [tick.label ?? ''].flat().map((line) => ctx.measureText(line).width))),
  );
  scale.width = Math.max(scale.width, Math.ceil(widest + axisExtra(scale)));
}

export interface Series {
  label: string;
  values: Array<number | null>;
  /**
   * What a value is of, point by point ("2 of 3 closed"): a rate drawn over one campaign must not
   * read like one over forty. Said in the tooltip and beside the value in the table; null for none.
   */
  notes?: Array<string | null>;
  /**
   * Points drawn hollow (a line's): a value over too few to read as a trend (a month's recovery
   * rate over one or two closed campaigns). The chart's `note` says why.
   */
  faint?: boolean[];
}

/** A value as the table writes it: the figure, then what it is of, if the series says. */
function cellText(
  value: number | null | undefined,
  note: string | null | undefined,
  format: (value: number) => string,
) {
  const figure = value === null || value === undefined ? '—' : format(value);
  return note ? `${figure} (${note})` : figure;
}

export interface ChartProps {
  title: string;
  /**
   * The period a chart of the chosen period covers, in the period picker's words ("Last 30
   * days"): a line under its title, and part of its name, its image's and its table's.
   */
  period?: string | undefined;
  /** One label per value of each series (months, categories, …). */
  labels: string[];
  series: Series[];
  kind: 'bar' | 'line';
  stacked?: boolean;
  horizontal?: boolean;
  /** How an axis value and a table cell are written (money, percent, count). */
  format: (value: number) => string;
  /** How an axis tick is written, when not as `format` (money: whole amounts without `.00`). */
  formatTick?: (value: number) => string;
  /** The header of the table's first column ("Month", "Reason", …). */
  labelHeader: string;
  /** Counts: whole-number ticks only. */
  integer?: boolean;
  /** A sentence under the chart: what its figures are of, what a hollow point means. */
  note?: string | undefined;
}

/** The class of a chart's table while it is stacked (useStacked). */
const CHART_STACKED = 'chart-stacked';

/**
 * Nothing to draw: every value zero or missing (a new workspace, a quiet period). Chart.js
 * would stretch a zero-high axis to one unit, ticks of a hundredth of a cent, which reads as data.
 */
function isEmpty(series: Series[]): boolean {
  return series.every((one) => one.values.every((value) => value === null || value === undefined || value === 0));
}

export function Chart({
  title,
  period,
  labels,
  series,
  kind,
  stacked,
  horizontal,
  format,
  formatTick = format,
  labelHeader,
  integer,
  note,
}: ChartProps) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const boxRef = useRef<HTMLDivElement>(null);
  const tableRef = useRef<HTMLTableElement>(null);
  // Stacked exactly when the table is wider than its box, as every list is (useStacked).
  const tableStacked = useStacked(true, boxRef, tableRef, CHART_STACKED);
  const empty = isEmpty(series);
  const name = period ? `${title}, ${period}` : title;

  useEffect(() => {
    if (empty) return undefined;
    const config: ChartConfiguration<'bar' | 'line', Array<number | null>, string> = {
      type: kind,
      data: {
        labels,
        datasets: series.map((one, index) => ({
          label: one.label,
          data: one.values,
          backgroundColor: SERIES_COLORS[index % SERIES_COLORS.length],
          // Stacked bars: a white line between the parts, so that two neighbours of near colours
          // (the outcomes' six) still read as two.
          borderColor: stacked ? '#ffffff' : SERIES_COLORS[index % SERIES_COLORS.length],
          ...(stacked && { borderWidth: 1 }),
          spanGaps: true,
          ...(one.faint && {
            // A month over one or two campaigns (0% then 100%) made the line's largest swing: the
            // line is solid only between solid points (Chart.js's segment styling).
            segment: faintSegments(one.faint, SERIES_COLORS[index % SERIES_COLORS.length]!),
            pointBackgroundColor: one.faint.map((faint) =>
              faint ? '#ffffff' : SERIES_COLORS[index % SERIES_COLORS.length]!,
            ),
            pointRadius: one.faint.map((faint) => (faint ? 4 : 3)),
            pointBorderWidth: one.faint.map((faint) => (faint ? 2 : 1)),
          }),
        })),
      },
      options: {
        // Chart.js's own number formatting (any the callbacks leave to it) in the page's language.
        locale: LOCALE,
        indexAxis: horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        layout: { padding: { left: horizontal ? CATEGORY_LABEL_MARGIN_PX : SLANTED_LABEL_ROOM_PX } },
        plugins: {
          legend: {
            display: series.length > 1,
            position: 'bottom',
            labels: { boxWidth: LEGEND_BOX_PX, boxHeight: LEGEND_BOX_PX },
          },
          tooltip: {
            callbacks: {
              label: (item) =>
                `${item.dataset.label ?? ''}: ${cellText(Number(item.raw), series[item.datasetIndex]?.notes?.[item.dataIndex], format)}`,
            },
          },
        },
        scales: {
          [horizontal ? 'y' : 'x']: {
            stacked: Boolean(stacked),
            grid: { display: false },
            ticks: {
              font: { size: TICK_FONT_SIZE },
              // Every category labelled: none skipped for want of height, two lines each if need be.
              ...(horizontal && { callback: wrappedCategory, autoSkip: false }),
            },
            ...(horizontal && { afterFit: fitWidestCategory }),
          },
          [horizontal ? 'x' : 'y']: {
            stacked: Boolean(stacked),
            beginAtZero: true,
            ticks: {
              font: { size: TICK_FONT_SIZE },
              callback: (value) => formatTick(Number(value)),
              ...(integer && { precision: 0 }),
            },
          },
        },
      },
    };
    const chart = new ChartJs(canvasRef.current!, { ...config, plugins: [minPlotHeight] });
    return () => chart.destroy();
  }, [empty, kind, labels, series, stacked, horizontal, format, formatTick, integer]);

  return (
    <figure className="chart card" aria-label={name}>
      <ChartTitle title={title} period={period} />
      {empty ? (
        <p className="state empty chart-empty">Nothing in this period yet.</p>
      ) : (
        <div className={horizontal ? 'chart-canvas tall' : 'chart-canvas'}>
          <canvas ref={canvasRef} role="img" aria-label={`${name}: chart; the same figures are in the table below`} />
        </div>
      )}
      {note && !empty && <p className="muted chart-note">{note}</p>}
      <details className="chart-table">
        {/* Named after its chart: six summaries all named "Show as a table" were one control
            heard six times. The visible words first, whole, so that a voice user saying them is
            understood (WCAG 2.5.3). */}
        <summary aria-label={`Show as a table: ${name}`}>Show as a table</summary>
        <div className="table-wrap" ref={boxRef}>
          {/* Six series (the outcomes by month) are too many columns for the card on a phone or in
              the two-column grid, and two (decline categories, revenue by month) at 320 px and at
              801 px beside the navigation: a table wider than its box stacks each row (styles.css,
              `table.chart-stacked`), its label on top and each figure after its series' name. */}
          <table className={tableStacked ? CHART_STACKED : undefined} ref={tableRef}>
            <caption className="visually-hidden">{name}</caption>
            <thead>
              <tr>
                <th scope="col">{labelHeader}</th>
                {series.map((one) => (
                  <th key={one.label} scope="col" className="numeric">
                    {one.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {labels.map((label, row) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  {series.map((one) => (
                    <td key={one.label} className="numeric" data-label={one.label}>
                      {cellText(one.values[row], one.notes?.[row], format)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/**
 * A chart's title, and under it the period it covers when it covers the chosen one (Chart's
 * `period`). Its figure is named "title, period" (`aria-label`): named by this caption, the two
 * lines ran together without a pause. The title is a heading (h2, under the page's h1), so that a
 * screen reader moves from chart to chart by headings; the figure keeps its name.
 */
export function ChartTitle({ title, period }: { title: string; period?: string | undefined }) {
  return (
    <figcaption className="chart-title">
      <h2 className="chart-heading">{title}</h2>
      {period && <span className="chart-period">{period}</span>}
    </figcaption>
  );
}
