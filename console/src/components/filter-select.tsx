import { Select } from "@mantine/core";

/** A filter's select: "Any" (the empty value) first, then the options. */
export function FilterSelect<V extends string>(props: {
  label: string;
  options: { value: V; label: string }[];
  value: V | "";
  onChange: (value: V | "") => void;
  anyLabel?: string;
  w?: number;
}) {
  return (
    <Select
      label={props.label}
      data={[{ value: "", label: props.anyLabel ?? "Any" }, ...props.options]}
      value={props.value}
      onChange={(v) => props.onChange((v ?? "") as V | "")}
      allowDeselect={false}
      w={props.w}
    />
  );
}
