/**
 * One uPlot chart over time, sized to its container. The x range is the caller's (the chosen
 * time range, so gaps show as gaps), the y range follows the data. After each draw the chart
 * writes what it drew into data attributes (`data-series`, `data-points`, `data-x-min`,
 * `data-x-max`), which the browser tests read.
 */
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'

const COLOURS = ['#0b57d0', '#b3261e', '#146c2e', '#8a4b00', '#6a1b9a', '#00796b', '#c2185b', '#37474f']
const AXIS = { stroke: '#4d5660', grid: { stroke: '#e3e7eb', width: 1 }, ticks: { stroke: '#c9d1d9', width: 1 } }

export interface TimeChartProps {
  /** Accessible name of the chart, e.g. "env.temperature over time". */
  title: string
  /** Label of the y axis. */
  yLabel: string
  /** One label per series. */
  labels: string[]
  /** x (epoch seconds), then one column per series. */
  data: uPlot.AlignedData
  /** The x range shown, epoch seconds. */
  range: [number, number]
  /** Draw bars (counts per interval) instead of lines. */
  bars?: boolean
  height?: number
}

function sparse (u: uPlot, seriesIdx: number): boolean {
  let values = 0
  for (const v of u.data[seriesIdx] ?? []) if (v !== null && v !== undefined) values++
  return values * 8 <= u.bbox.width / devicePixelRatio
}

export function TimeChart ({ title, yLabel, labels, data, range, bars = false, height = 220 }: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | undefined>(undefined)
  const shown = useRef(range)
  shown.current = range

  // A new plot when the series change; data and range changes go through setData.
  useEffect(() => {
    const el = box.current
    if (el === null) return
    const options: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      scales: { x: { time: true, range: () => [shown.current[0], shown.current[1]] } },
      axes: [{ ...AXIS, label: 'Time' }, { ...AXIS, label: yLabel, size: 64 }],
      series: [
        { label: 'Time' },
        ...labels.map((label, i): uPlot.Series => ({
          label,
          stroke: COLOURS[i % COLOURS.length]!,
          width: 2,
          spanGaps: true,
          // Dots where a series has few values (uPlot's default counts every x, nulls too).
          points: { show: sparse, size: 6 },
          ...(bars ? { fill: `${COLOURS[i % COLOURS.length]!}66`, paths: uPlot.paths.bars!({ size: [0.8, 40] }), points: { show: false } } : {})
        }))
      ],
      cursor: { sync: { key: 'telemetry' } },
      hooks: {
        draw: [(u) => {
          el.dataset.series = String(u.series.length - 1)
          el.dataset.points = String(u.data[0].length)
          el.dataset.xMin = String(u.scales.x?.min ?? '')
          el.dataset.xMax = String(u.scales.x?.max ?? '')
        }]
      }
    }
    const u = new uPlot(options, data, el)
    plot.current = u
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      u.destroy()
      plot.current = undefined
    }
  }, [labels.join('\u0000'), yLabel, bars, height])

  useEffect(() => { plot.current?.setData(data) }, [data, range[0], range[1]])

  return <div class="chart" ref={box} role="figure" aria-label={title} />
}
