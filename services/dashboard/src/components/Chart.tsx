import { useEffect, useId, useRef } from 'react';
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
  type ChartConfiguration,
} from 'chart.js';

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

/** A palette with enough contrast on white for bars and lines (WCAG 1.4.11 non-text, 3:1). */
const SERIES_COLORS = ['#5046e4', '#0a7d48', '#c0123c', '#b35c00', '#0b6e99', '#7a3ea1', '#566176'];

/**
 * Room left of the plot for the first x label once Chart.js slants the labels (a narrow chart,
 * as at 390 px). It reserves the label's run along the slant but not all of the label's height
 * that leans further left, so under a narrow y axis (small counts) the first month was cut at
 * the canvas's edge. A line of the 12 px tick font covers the most that lean can be.
 */
const SLANTED_LABEL_ROOM_PX = 14;

export interface Series {
  label: string;
  values: Array<number | null>;
}

export interface ChartProps {
  title: string;
  /** One label per value of each series (months, categories, …). */
  labels: string[];
  series: Series[];
  kind: 'bar' | 'line';
  stacked?: boolean;
  horizontal?: boolean;
  /** How an axis value and a table cell are written (money, percent, count). */
  format: (value: number) => string;
  /** The header of the table's first column ("Month", "Reason", …). */
  labelHeader: string;
  /** Counts: whole-number ticks only. */
  integer?: boolean;
}

export function Chart({ title, labels, series, kind, stacked, horizontal, format, labelHeader, integer }: ChartProps) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const titleId = useId();

  useEffect(() => {
    const config: ChartConfiguration<'bar' | 'line', Array<number | null>, string> = {
      type: kind,
      data: {
        labels,
        datasets: series.map((one, index) => ({
          label: one.label,
          data: one.values,
          backgroundColor: SERIES_COLORS[index % SERIES_COLORS.length],
          borderColor: SERIES_COLORS[index % SERIES_COLORS.length],
          spanGaps: true,
        })),
      },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        layout: { padding: horizontal ? 0 : { left: SLANTED_LABEL_ROOM_PX } },
        plugins: {
          legend: { display: series.length > 1, position: 'bottom' },
          tooltip: {
            callbacks: {
              label: (item) => `${item.dataset.label ?? ''}: ${format(Number(item.raw))}`,
            },
          },
        },
        scales: {
          [horizontal ? 'y' : 'x']: { stacked: Boolean(stacked), grid: { display: false } },
          [horizontal ? 'x' : 'y']: {
            stacked: Boolean(stacked),
            beginAtZero: true,
            ticks: { callback: (value) => format(Number(value)), ...(integer && { precision: 0 }) },
          },
        },
      },
    };
    const chart = new ChartJs(canvasRef.current!, config);
    return () => chart.destroy();
  }, [kind, labels, series, stacked, horizontal, format, integer]);

  return (
    <figure className="chart card" aria-labelledby={titleId}>
      <figcaption id={titleId} className="chart-title">
        {title}
      </figcaption>
      <div className={horizontal ? 'chart-canvas tall' : 'chart-canvas'}>
        <canvas ref={canvasRef} role="img" aria-label={`${title}: chart; the same figures are in the table below`} />
      </div>
      <details className="chart-table">
        <summary>Show as a table</summary>
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{title}</caption>
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
                  {series.map((one) => {
                    const value = one.values[row];
                    return (
                      <td key={one.label} className="numeric">
                        {value === null || value === undefined ? '—' : format(value)}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
