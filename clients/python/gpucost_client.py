"""A typed client for the gpucost API, standard library only (docs/python.md).

Money is read exactly: every JSON number with a fraction becomes a ``decimal.Decimal``
(``json.loads(parse_float=Decimal)``), so the parts of a budget add up to its total to the cent.
Plan CSVs load into row dicts (numbers as ``int`` or ``Decimal``) and, when pandas is installed,
into DataFrames. An answer that is ``application/problem+json`` raises ``GpucostProblem``.

Notebook use: put this file beside the notebook, or ``sys.path.append("clients/python")``.
"""
from __future__ import annotations

import csv
import io
import json
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

__all__ = ["Client", "GpucostProblem", "csv_rows", "to_dataframe", "loads"]

Json = Any  # a decoded JSON value: dict, list, str, int, Decimal, bool or None
Row = Dict[str, Union[str, int, Decimal, None]]
Query = Mapping[str, Union[str, int, bool, Sequence[str], None]]


def loads(text: str) -> Json:
    """JSON with every fractional number as an exact Decimal (integers stay int)."""
    return json.loads(text, parse_float=Decimal)


def _dumps(body: Json) -> bytes:
    def exact(value: Any) -> float:
        # json writes a float by its shortest round-trip text, which is the Decimal's own text
        # for every amount with up to 15 significant digits: the server reads what was meant.
        if isinstance(value, Decimal):
            as_float = float(value)
            if Decimal(repr(as_float)) != value:
                raise ValueError(f"{value} has more digits than a JSON number carries exactly")
            return as_float
        raise TypeError(f"{type(value).__name__} is not JSON")

    return json.dumps(body, default=exact).encode()


class GpucostProblem(Exception):
    """An RFC 9457 problem answer: ``status``, the stable ``code``, the ``field`` at fault
    (a JSON pointer or parameter name, or None) and the server's ``detail``."""

    def __init__(self, status: int, problem: Mapping[str, Json], headers: Mapping[str, str]):
        self.status: int = status
        self.code: str = str(problem.get("code", ""))
        self.field: Optional[str] = problem.get("field")
        self.detail: str = str(problem.get("detail", problem.get("title", "")))
        self.problem: Dict[str, Json] = dict(problem)
        self.headers: Dict[str, str] = dict(headers)
        where = f" on {self.field}" if self.field else ""
        super().__init__(f"{status} {self.code}{where}: {self.detail}")


def _number(text: str) -> Union[str, int, Decimal, None]:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = Decimal(text)
    except ArithmeticError:
        return text
    return value if value.is_finite() else text


def csv_rows(text: str) -> List[Row]:
    """A CSV answer as one dict per row: numbers as int or Decimal, empty cells None, the rest
    (ids, dates, booleans) as text."""
    return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


def to_dataframe(rows: Sequence[Mapping[str, Any]]) -> Any:
    """The rows as a pandas DataFrame (Debian: apt install python3-pandas). Money columns stay
    Decimal (dtype object): sum them with ``sum(df[col])`` to keep cents exact, or convert with
    ``df[col].astype(float)`` for plotting."""
    try:
        import pandas  # noqa: PLC0415 (optional: the client itself needs only the stdlib)
    except ImportError as e:
        raise ImportError("to_dataframe needs pandas (apt install python3-pandas)") from e
    return pandas.DataFrame(list(rows))


class Client:
    """One gpucost server. ``api_key``: a read, admin or org key (database mode)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8080", api_key: Optional[str] = None,
                 timeout_s: float = 120.0):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.last_headers: Dict[str, str] = {}

    # -- transport ------------------------------------------------------------------------

    def _send(self, method: str, path: str, query: Optional[Query] = None,
              body: Optional[bytes] = None, content_type: str = "application/json",
              accept: str = "application/json",
              headers: Optional[Mapping[str, str]] = None) -> str:
        url = self.base_url + path
        pairs = [(k, v) for k, v in (query or {}).items() if v is not None]
        if pairs:
            flat = [(k, str(x).lower() if isinstance(x, bool) else str(x))
                    for k, v in pairs for x in (v if isinstance(v, (list, tuple)) else [v])]
            url += "?" + urllib.parse.urlencode(flat)
        sent = {"Accept": accept, **(headers or {})}
        if body is not None:
            sent["Content-Type"] = content_type
        if self.api_key:
            sent["Authorization"] = "Bearer " + self.api_key
        request = urllib.request.Request(url, data=body, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as r:
                self.last_headers = dict(r.headers.items())
                return r.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            self.last_headers = dict(e.headers.items())
            try:
                problem = loads(text)
            except ValueError:
                problem = {"detail": text}
            if not isinstance(problem, dict):
                problem = {"detail": text}
            raise GpucostProblem(e.code, problem, self.last_headers) from None

    def _json(self, method: str, path: str, query: Optional[Query] = None,
              body: Optional[Json] = None, headers: Optional[Mapping[str, str]] = None) -> Json:
        text = self._send(method, path, query, None if body is None else _dumps(body),
                          headers=headers)
        return loads(text) if text else None

    def _csv(self, path: str, body: Json) -> List[Row]:
        return csv_rows(self._send("POST", path, body=_dumps(body), accept="text/csv"))

    @staticmethod
    def _id(value: str) -> str:
        return urllib.parse.quote(value, safe="")

    # -- catalog reads --------------------------------------------------------------------

    def catalog(self, as_of: Optional[str] = None) -> Json:
        """GET /v1/catalog: catalog_version, counts, oldest and newest as-of."""
        return self._json("GET", "/v1/catalog", {"as_of": as_of})

    def accelerators(self, vendor: Optional[Sequence[str]] = None,
                     precision: Optional[Sequence[str]] = None) -> Json:
        return self._json("GET", "/v1/accelerators", {"vendor": vendor, "precision": precision})

    def accelerator(self, accelerator_id: str) -> Json:
        return self._json("GET", "/v1/accelerators/" + self._id(accelerator_id))

    def providers(self, as_of: Optional[str] = None) -> Json:
        return self._json("GET", "/v1/providers", {"as_of": as_of})

    def offerings(self, **filters: Any) -> Json:
        """One page of GET /v1/offerings (provider, accelerator, price_type, region, sort,
        limit, cursor, ...: the query parameters of openapi.yaml, lists for repeated ones)."""
        return self._json("GET", "/v1/offerings", filters)

    def iter_offerings(self, **filters: Any) -> Iterator[Json]:
        """Every offering the filters match, page after page (next_cursor back as cursor)."""
        page = self.offerings(**filters)
        yield from page["items"]
        while page.get("next_cursor"):
            page = self.offerings(**dict(filters, cursor=page["next_cursor"]))
            yield from page["items"]

    def offering(self, offering_id: str, as_of: Optional[str] = None) -> Json:
        return self._json("GET", "/v1/offerings/" + self._id(offering_id), {"as_of": as_of})

    def offering_history(self, offering_id: str) -> Json:
        """Database mode: every price the offering had, with valid_from / valid_to."""
        return self._json("GET", "/v1/offerings/" + self._id(offering_id) + "/history")

    def models(self, **filters: Any) -> Json:
        return self._json("GET", "/v1/models", filters)

    def model(self, model_id: str) -> Json:
        return self._json("GET", "/v1/models/" + self._id(model_id))

    # -- estimates and plans --------------------------------------------------------------

    def estimate_training(self, request: Json) -> Json:
        return self._json("POST", "/v1/estimates/training", body=request)

    def estimate_inference(self, request: Json) -> Json:
        return self._json("POST", "/v1/estimates/inference", body=request)

    def plan_training(self, request: Json) -> Json:
        return self._json("POST", "/v1/plans/training", body=request)

    def plan_training_rows(self, request: Json) -> List[Row]:
        """The training plan's options as CSV rows (Accept: text/csv)."""
        return self._csv("/v1/plans/training", request)

    def plan_spot(self, request: Json) -> Json:
        return self._json("POST", "/v1/plans/spot", body=request)

    def plan_rent_vs_buy(self, request: Json) -> Json:
        return self._json("POST", "/v1/plans/rent-vs-buy", body=request)

    def plan_rent_vs_buy_rows(self, request: Json) -> List[Row]:
        """The month-by-month series as CSV rows."""
        return self._csv("/v1/plans/rent-vs-buy", request)

    def plan_inference(self, request: Json) -> Json:
        return self._json("POST", "/v1/plans/inference", body=request)

    def plan_inference_rows(self, request: Json) -> List[Row]:
        """The serving options as CSV rows."""
        return self._csv("/v1/plans/inference", request)

    # -- scenarios (database mode) --------------------------------------------------------

    def save_scenario(self, name: str, plan: str, request: Json,
                      tags: Optional[Sequence[str]] = None,
                      idempotency_key: Optional[str] = None) -> Json:
        """POST /v1/scenarios: plan is spot, rent-vs-buy, training or inference."""
        body: Dict[str, Json] = {"name": name, "plan": plan, "request": request}
        if tags is not None:
            body["tags"] = list(tags)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._json("POST", "/v1/scenarios", body=body, headers=headers)

    def scenario(self, scenario_id: str) -> Json:
        return self._json("GET", "/v1/scenarios/" + self._id(scenario_id))

    def scenarios(self, **filters: Any) -> Json:
        return self._json("GET", "/v1/scenarios", filters)

    def evaluate_scenario(self, scenario_id: str, as_of: Optional[str] = None) -> Json:
        """The saved request planned again on current (or as_of) prices, with what changed."""
        return self._json("POST", "/v1/scenarios/" + self._id(scenario_id) + "/evaluate",
                          {"as_of": as_of})

    def delete_scenario(self, scenario_id: str) -> None:
        self._send("DELETE", "/v1/scenarios/" + self._id(scenario_id))

    # -- price books (database mode) ------------------------------------------------------

    def create_price_book(self, book: Json, idempotency_key: Optional[str] = None) -> Json:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._json("POST", "/v1/price-books", body=book, headers=headers)

    def price_books(self) -> Json:
        return self._json("GET", "/v1/price-books")

    def price_book(self, book_id: str, version: Optional[int] = None) -> Json:
        return self._json("GET", "/v1/price-books/" + self._id(book_id), {"version": version})

    def replace_price_book(self, book_id: str, book: Json, if_match: Optional[str] = None) -> Json:
        """PUT: the book's next version (If-Match: the ETag you read, to refuse a lost update)."""
        headers = {"If-Match": if_match} if if_match else None
        return self._json("PUT", "/v1/price-books/" + self._id(book_id), body=book,
                          headers=headers)

    def delete_price_book(self, book_id: str) -> None:
        self._send("DELETE", "/v1/price-books/" + self._id(book_id))

    # -- actual spend (database mode) -----------------------------------------------------

    def send_actuals(self, focus_csv: str, tag_key: Optional[str] = None) -> Json:
        """POST /v1/actuals: a cloud's FOCUS export (CSV text), admin key."""
        return loads(self._send("POST", "/v1/actuals", {"tag_key": tag_key},
                                focus_csv.encode("utf-8"), content_type="text/csv"))

    def scenario_actuals(self, scenario_id: str) -> Json:
        """Plan vs actual for a saved scenario: the gap split into price and quantity."""
        return self._json("GET", "/v1/scenarios/" + self._id(scenario_id) + "/actuals")

    def actuals_imports(self) -> Json:
        return self._json("GET", "/v1/actuals/imports")

    def delete_actuals_import(self, import_id: str) -> None:
        self._send("DELETE", "/v1/actuals/imports/" + self._id(import_id))

    # -- catalog writes (database mode, admin key) ----------------------------------------

    def put_price(self, offering_id: str, price: Json, if_match: Optional[str] = None) -> Json:
        headers = {"If-Match": if_match} if if_match else None
        return self._json("PUT", "/v1/offerings/" + self._id(offering_id) + "/price",
                          body=price, headers=headers)
